# The policy ladder's generator: ../shared/dumps/tpu-aot/programs/tpu_programs.py with the
# remat ladder's and the offload ladder's policies as programs (lm_scan_plain: no
# jax.checkpoint; lm_scan_remat: nothing_saveable; lm_scan_dots:
# dots_with_no_batch_dims_saveable; lm_scan_save_qkv: save_only_these_names("q", "k", "v");
# lm_scan_offload_dots: offload_dot_with_no_batch_dims; lm_scan_offload_qkv:
# save_and_offload_only_these_names(offloaded q, k, v)), each to pinned_host.
# tests/bench/make_policy_ladder.sh runs it for the pairs tests/bench/policy_ladder.py reads.
# Deviceless (ahead-of-time) TPU compilation of our own programs with libtpu from PyPI.
#
# Usage (XLA_FLAGS must be set in the environment before python starts):
#   XLA_FLAGS="--xla_dump_to=DIR --xla_dump_hlo_as_text" \
#     python tpu_programs.py PROG TOPOLOGY [key=value ...]
# PROG: lm_scan_remat | lm_unrolled | lm_scan_offload | host_offload | pallas_matmul | tiny_matmul
# TOPOLOGY: e.g. v5e:2x2, v6e:2x2, v4:2x2x1 (v4/v5p get chip_config_name=megacore)
# key=value overrides the model config (d_model, n_heads, d_ff, n_layers, seq, batch, vocab).
# Writes RESULT.json next to the dump (timings, memory_analysis, error text if any).
import json
import os
import sys
import time
import traceback

T_START = time.time()

import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import topologies
from jax.ad_checkpoint import checkpoint_name
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

PROG = sys.argv[1]
TOPO = sys.argv[2]
CFG = dict(vocab=32000, d_model=1024, n_heads=16, d_ff=4096, n_layers=8, seq=1024, batch=16)
for kv in sys.argv[3:]:
    k, v = kv.split("=")
    CFG[k] = int(v)

RESULT = {"prog": PROG, "topology": TOPO, "cfg": CFG, "jax": jax.__version__,
          "XLA_FLAGS": os.environ.get("XLA_FLAGS"), "LIBTPU_INIT_ARGS": os.environ.get("LIBTPU_INIT_ARGS"),
          "JAX_PLATFORMS": os.environ.get("JAX_PLATFORMS")}
try:
    import libtpu
    RESULT["libtpu_file"] = libtpu.__file__
    from importlib.metadata import version
    RESULT["libtpu"] = version("libtpu")
except Exception as e:  # pragma: no cover
    RESULT["libtpu"] = repr(e)


def get_devices():
    kw = {}
    if TOPO.startswith(("v4", "v5p")):
        kw["chip_config_name"] = "megacore"
    td = topologies.get_topology_desc(TOPO, platform="tpu", **kw)
    return td.devices


def rms_norm(x, scale):
    x32 = x.astype(jnp.float32)
    y = x32 * jax.lax.rsqrt(jnp.mean(x32 * x32, axis=-1, keepdims=True) + 1e-6)
    return (y * scale).astype(jnp.bfloat16)


def layer_fn(h, p, offload_names=False):
    """One pre-norm decoder layer. h: bf16[B,S,D]; p: dict of f32 params for this layer."""
    c = lambda w: w.astype(jnp.bfloat16)
    x = rms_norm(h, p["ln1"])
    q = jnp.einsum("bsd,dhk->bshk", x, c(p["wq"]))
    k = jnp.einsum("bsd,dhk->bshk", x, c(p["wk"]))
    v = jnp.einsum("bsd,dhk->bshk", x, c(p["wv"]))
    if offload_names:
        q = checkpoint_name(q, "q")
        k = checkpoint_name(k, "k")
        v = checkpoint_name(v, "v")
    s = jnp.einsum("bshk,bthk->bhst", q, k).astype(jnp.float32) / np.sqrt(q.shape[-1])
    S = h.shape[1]
    mask = jnp.tril(jnp.ones((S, S), dtype=bool))
    s = jnp.where(mask[None, None], s, -1e9)
    a = jax.nn.softmax(s, axis=-1).astype(jnp.bfloat16)
    o = jnp.einsum("bhst,bthk->bshk", a, v)
    h = h + jnp.einsum("bshk,hkd->bsd", o, c(p["wo"]))
    x = rms_norm(h, p["ln2"])
    u = jax.nn.gelu(jnp.einsum("bsd,df->bsf", x, c(p["w1"])))
    if offload_names:
        u = checkpoint_name(u, "mlp_hidden")
    h = h + jnp.einsum("bsf,fd->bsd", u, c(p["w2"]))
    return h


def param_specs(cfg):
    L, D, H, F, V = cfg["n_layers"], cfg["d_model"], cfg["n_heads"], cfg["d_ff"], cfg["vocab"]
    K = D // H
    shapes = {
        "embed": ((V, D), P("model", None)),
        "unembed": ((D, V), P(None, "model")),
        "ln_f": ((D,), P()),
        "layers": {
            "ln1": ((L, D), P()),
            "ln2": ((L, D), P()),
            "wq": ((L, D, H, K), P(None, None, "model", None)),
            "wk": ((L, D, H, K), P(None, None, "model", None)),
            "wv": ((L, D, H, K), P(None, None, "model", None)),
            "wo": ((L, H, K, D), P(None, "model", None, None)),
            "w1": ((L, D, F), P(None, None, "model")),
            "w2": ((L, F, D), P(None, "model", None)),
        },
    }
    return shapes


def build_lm(mesh, mode):
    import optax
    cfg = CFG
    spec_tree = param_specs(cfg)
    is_leaf = lambda x: isinstance(x, tuple) and len(x) == 2 and isinstance(x[1], P)
    p_shard = jax.tree.map(lambda t: NamedSharding(mesh, t[1]), spec_tree, is_leaf=is_leaf)
    p_abs = jax.tree.map(lambda t: jax.ShapeDtypeStruct(t[0], jnp.float32, sharding=NamedSharding(mesh, t[1])),
                         spec_tree, is_leaf=is_leaf)
    tx = optax.adamw(3e-4, weight_decay=0.1)
    opt_abs = jax.eval_shape(tx.init, p_abs)
    # optimizer state mirrors params; counts are replicated scalars
    def opt_sharding(x):
        return x.sharding if getattr(x, "sharding", None) is not None else NamedSharding(mesh, P())
    # eval_shape drops shardings on the outputs; rebuild them from the param tree by structure.
    flat_p, _ = jax.tree.flatten(p_shard)
    def attach(state):
        leaves, tdef = jax.tree.flatten(state)
        out = []
        # mu and nu each hold a copy of the param tree; count leaves are scalars
        it = iter(flat_p * 2)
        for l in leaves:
            if l.ndim == 0:
                out.append(jax.ShapeDtypeStruct(l.shape, l.dtype, sharding=NamedSharding(mesh, P())))
            else:
                out.append(jax.ShapeDtypeStruct(l.shape, l.dtype, sharding=next(it)))
        return jax.tree.unflatten(tdef, out)
    opt_abs = attach(opt_abs)
    opt_shard = jax.tree.map(lambda x: x.sharding, opt_abs)
    B, S = cfg["batch"], cfg["seq"]
    tok_shard = NamedSharding(mesh, P("data", None))
    tok_abs = jax.ShapeDtypeStruct((B, S), jnp.int32, sharding=tok_shard)
    act_spec = NamedSharding(mesh, P("data", None, None))

    cp = jax.checkpoint_policies
    policy = {
        "offload": cp.save_and_offload_only_these_names(
            names_which_can_be_saved=[], names_which_can_be_offloaded=["q", "k", "v", "mlp_hidden"],
            offload_src="device", offload_dst="pinned_host"),
        "offload_qkv": cp.save_and_offload_only_these_names(
            names_which_can_be_saved=[], names_which_can_be_offloaded=["q", "k", "v"],
            offload_src="device", offload_dst="pinned_host"),
        "offload_dots": cp.offload_dot_with_no_batch_dims(offload_src="device", offload_dst="pinned_host"),
        "dots": cp.dots_with_no_batch_dims_saveable,
        "save_qkv": cp.save_only_these_names("q", "k", "v"),
    }.get(mode, cp.nothing_saveable)

    def forward(params, tokens):
        h = params["embed"].astype(jnp.bfloat16)[tokens]
        h = jax.lax.with_sharding_constraint(h, act_spec)
        if mode == "plain":
            h, _ = jax.lax.scan(lambda h, p: (layer_fn(h, p), None), h, params["layers"])
        elif mode != "unrolled":
            named = mode in ("offload", "offload_qkv", "save_qkv")
            body = jax.checkpoint(lambda h, p: (layer_fn(h, p, offload_names=named), None),
                                  policy=policy)
            h, _ = jax.lax.scan(body, h, params["layers"])
        elif mode == "unrolled":
            for i in range(cfg["n_layers"]):
                p_i = jax.tree.map(lambda a: a[i], params["layers"])
                h = layer_fn(h, p_i)
        else:
            raise ValueError(mode)
        h = rms_norm(h, params["ln_f"])
        logits = jnp.einsum("bsd,dv->bsv", h, params["unembed"].astype(jnp.bfloat16))
        return logits

    def loss_fn(params, tokens):
        logits = forward(params, tokens[:, :-1])
        labels = tokens[:, 1:]
        lp = jax.nn.log_softmax(logits.astype(jnp.float32), axis=-1)
        nll = -jnp.take_along_axis(lp, labels[..., None], axis=-1)[..., 0]
        return nll.mean()

    def train_step(params, opt_state, tokens):
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens)
        updates, opt_state = tx.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
        return params, opt_state, loss

    jf = jax.jit(train_step, in_shardings=(p_shard, opt_shard, tok_shard),
                 out_shardings=(p_shard, opt_shard, NamedSharding(mesh, P())),
                 donate_argnums=(0, 1))
    # tokens of length S+1 so that the model sees S positions
    tok_abs = jax.ShapeDtypeStruct((B, S + 1), jnp.int32, sharding=tok_shard)
    nparams = sum(int(np.prod(x.shape)) for x in jax.tree.leaves(p_abs))
    RESULT["n_params"] = nparams
    return jf, (p_abs, opt_abs, tok_abs)


def build_host_offload(mesh):
    """Explicit transfers between device HBM and pinned host memory inside one jit."""
    dev = NamedSharding(mesh, P("data", "model"))
    host = NamedSharding(mesh, P("data", "model"), memory_kind="pinned_host")

    def f(x_host, w):
        x = jax.device_put(x_host, dev)            # host -> device
        y = jnp.tanh(x @ w)
        y_host = jax.device_put(y, host)           # device -> host
        z = jax.device_put(y_host, dev) * 2.0      # back again
        return y_host, (z @ w.T).sum(axis=1)

    jf = jax.jit(f, in_shardings=(host, NamedSharding(mesh, P("model", None))),
                 out_shardings=(host, NamedSharding(mesh, P("data"))))
    x_abs = jax.ShapeDtypeStruct((4096, 2048), jnp.float32, sharding=host)
    w_abs = jax.ShapeDtypeStruct((2048, 2048), jnp.float32, sharding=NamedSharding(mesh, P("model", None)))
    return jf, (x_abs, w_abs)


def build_pallas(mesh):
    """A Pallas TPU (Mosaic) tiled matmul + bias + relu, under shard_map, so VMEM scratch is explicit."""
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu
    try:
        from jax import shard_map
        smap_kw = dict(check_vma=False)
    except ImportError:  # older jax
        from jax.experimental.shard_map import shard_map
        smap_kw = dict(check_rep=False)

    bm, bn, bk = 256, 256, 512

    def kernel(x_ref, w_ref, b_ref, o_ref, acc_ref):
        @pl.when(pl.program_id(2) == 0)
        def _():
            acc_ref[...] = jnp.zeros_like(acc_ref)
        acc_ref[...] += jnp.dot(x_ref[...], w_ref[...], preferred_element_type=jnp.float32)

        @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
        def _():
            o_ref[...] = jnp.maximum(acc_ref[...] + b_ref[...], 0).astype(o_ref.dtype)

    def mm(x, w, b):
        M, K = x.shape
        _, N = w.shape
        return pl.pallas_call(
            kernel,
            out_shape=jax.ShapeDtypeStruct((M, N), jnp.bfloat16),
            grid=(M // bm, N // bn, K // bk),
            in_specs=[pl.BlockSpec((bm, bk), lambda i, j, k: (i, k)),
                      pl.BlockSpec((bk, bn), lambda i, j, k: (k, j)),
                      pl.BlockSpec((1, bn), lambda i, j, k: (0, j))],
            out_specs=pl.BlockSpec((bm, bn), lambda i, j, k: (i, j)),
            scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
        )(x, w, b)

    def f(x, w, b):
        y = shard_map(mm, mesh=mesh, in_specs=(P("data", None), P(None, "model"), P(None, "model")),
                      out_specs=P("data", "model"), **smap_kw)(x, w, b)
        return jnp.sum(y.astype(jnp.float32) ** 2)

    sx = NamedSharding(mesh, P("data", None))
    sw = NamedSharding(mesh, P(None, "model"))
    jf = jax.jit(f)
    return jf, (jax.ShapeDtypeStruct((2048, 4096), jnp.bfloat16, sharding=sx),
                jax.ShapeDtypeStruct((4096, 2048), jnp.bfloat16, sharding=sw),
                jax.ShapeDtypeStruct((1, 2048), jnp.float32, sharding=sw))


def build_tiny(mesh):
    """The first probe: tanh(a @ b).sum(0) with a sharded over all devices."""
    s = NamedSharding(mesh, P(("data", "model")))

    def f(a, b):
        return jnp.tanh(a @ b).sum(axis=0)
    return jax.jit(f), (jax.ShapeDtypeStruct((256, 512), jnp.bfloat16, sharding=s),
                        jax.ShapeDtypeStruct((512, 512), jnp.bfloat16, sharding=NamedSharding(mesh, P())))


def main():
    t0 = time.time()
    devs = get_devices()
    RESULT["devices"] = [str(d) for d in devs]
    RESULT["device_kind"] = devs[0].device_kind
    mesh = Mesh(np.array(devs).reshape(2, -1), ("data", "model"))
    RESULT["mesh"] = dict(mesh.shape)
    RESULT["t_import_s"] = round(t0 - T_START, 2)
    RESULT["t_topology_s"] = round(time.time() - t0, 2)
    if PROG.startswith("lm_"):
        mode = {"lm_scan_remat": "scan_remat", "lm_unrolled": "unrolled", "lm_scan_offload": "offload"}.get(
            PROG, PROG.removeprefix("lm_scan_"))
        jf, args = build_lm(mesh, mode)
    elif PROG == "host_offload":
        jf, args = build_host_offload(mesh)
    elif PROG == "tiny_matmul":
        jf, args = build_tiny(mesh)
    elif PROG == "pallas_matmul":
        jf, args = build_pallas(mesh)
    else:
        raise SystemExit("unknown prog " + PROG)
    t1 = time.time()
    lowered = jf.lower(*args)
    t2 = time.time()
    RESULT["t_lower_s"] = round(t2 - t1, 2)
    print(f"[{PROG} {TOPO}] lowered in {t2 - t1:.1f}s; compiling...", flush=True)
    try:
        compiled = lowered.compile()
    except Exception as e:
        t3 = time.time()
        RESULT["t_compile_s"] = round(t3 - t2, 2)
        RESULT["ok"] = False
        RESULT["error_type"] = f"{type(e).__module__}.{type(e).__name__}"
        RESULT["error"] = str(e)
        print(f"[{PROG} {TOPO}] compile FAILED after {t3 - t2:.1f}s: {type(e).__name__}", flush=True)
        return e
    t3 = time.time()
    RESULT["t_compile_s"] = round(t3 - t2, 2)
    RESULT["ok"] = True
    ma = compiled.memory_analysis()
    RESULT["memory_analysis"] = {k: getattr(ma, k) for k in dir(ma)
                                 if k.endswith("_in_bytes")} if ma is not None else None
    print(f"[{PROG} {TOPO}] compiled in {t3 - t2:.1f}s; memory_analysis={ma}", flush=True)
    return None


if __name__ == "__main__":
    err = None
    try:
        err = main()
    except Exception as e:
        RESULT["ok"] = False
        RESULT["error_type"] = f"{type(e).__module__}.{type(e).__name__}"
        RESULT["error"] = str(e)
        RESULT["traceback"] = traceback.format_exc()
        err = e
        traceback.print_exc()
    RESULT["t_total_s"] = round(time.time() - T_START, 2)
    out = os.environ.get("RESULT_JSON")
    if out:
        with open(out, "w") as f:
            json.dump(RESULT, f, indent=1, default=str)
        if err is not None:
            with open(out.replace(".json", ".error.txt"), "w") as f:
                f.write(RESULT["error"])
    sys.exit(0 if err is None else 3)

// Reads modules' `Used values` bodies in a wasm instance of its own, while the page draws
// what the first read gave (src/ui/read/uses_worker.rs starts it with the page, as a module
// worker, and keeps it). Its first message is { glue, wasm } (the URLs of the app's
// wasm-bindgen glue and wasm module, the page's own, which its CSP allows): the instance
// starts while the page loads, so that no request is made once a file is given. A job is
// { id, files, names, bodies } (the files the bodies are in, their names, the bodies as
// JSON) with a MessagePort to answer on, or { id, files, names, piece } for one piece of a
// body (the core's Job as JSON, read by the app's `PieceWork`: src/ui/read/pieces.rs, the
// page's piece workers, each its own instance of this script); { cancel: id } calls a job
// off. The bodies are read
// in 16 MiB slices as the app's `UsesRead` asks for them, the next asked for while it parses one (a browser's
// read of a slice costs a few ms whatever its size); after each slice the worker posts
// [id, bytes] to the page as progress. The answer is what `finish` returns (its
// buffers transferred, not copied), or { error } when the app could not start here, could
// not read, or the job was called off.
const SLICE = 16 << 20;
const calledOff = new Set();
let app;
onmessage = async ({ data, ports: [port] }) => {
  if (data.glue) {
    app ??= import(data.glue).then(async (g) => {
      await g.default({ module_or_path: data.wasm });
      return g;
    });
    await app.catch(() => {});
    return;
  }
  if (data.cancel !== undefined) {
    calledOff.add(data.cancel);
    return;
  }
  const { id, files, names, bodies, piece } = data;
  let read;
  try {
    if (!app) throw new Error('the worker was not started');
    const g = await app;
    read = piece ? new g.PieceWork(piece) : new g.UsesRead(bodies);
    // The bytes the app's reader asks for, [name, start, end], until it asks for none.
    for (let ask; (ask = read.next()); ) {
      const [name, start, end] = ask;
      const file = files[names.indexOf(name)];
      if (!file) throw new Error(`${name} was not handed over`);
      const slice = (at) => file.slice(at, Math.min(at + SLICE, end)).arrayBuffer();
      let next = slice(start);
      for (let at = start; at < end; at = Math.min(at + SLICE, end)) {
        const bytes = await next;
        if (calledOff.has(id)) throw new Error('called off');
        if (at + SLICE < end) next = slice(at + SLICE);
        read.feed(new Uint8Array(bytes));
        postMessage([id, bytes.byteLength]);
      }
    }
    const out = read.finish();
    port.postMessage(out, out.filter((x) => x instanceof ArrayBuffer));
  } catch (err) {
    port.postMessage({ error: String(err?.message ?? err) });
  } finally {
    calledOff.delete(id);
    read?.free();
  }
  port.close();
};

// Reads a module's `Used values` bodies in a wasm instance of its own, while the page draws
// what the first read gave (src/ui/uses_worker.rs starts it, as a module worker, one per
// read). A message is { glue, wasm } (the URLs of the app's wasm-bindgen glue and wasm
// module, the page's own, which its CSP allows): the instance starts, so that it is ready
// when the page has bodies for it. A job adds { files, names, bodies } (the files the
// bodies are in, their names, the bodies as JSON) and a MessagePort to answer on: what
// `bufscopeReadUses` returns (its buffers transferred, not copied), or { error } when the
// app could not start here or could not read. Jobs are done one after the other.
let app;
onmessage = async ({ data: { glue, wasm, files, names, bodies }, ports: [port] }) => {
  app ??= import(glue).then(async (g) => {
    await g.default({ module_or_path: wasm });
    return g;
  });
  if (!port) {
    await app.catch(() => {});
    return;
  }
  try {
    const out = (await app).bufscopeReadUses(files, names, bodies);
    port.postMessage(out, out.filter((x) => x instanceof ArrayBuffer));
  } catch (err) {
    port.postMessage({ error: String(err?.message ?? err) });
  }
  port.close();
};

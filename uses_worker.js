// Reads a module's `Used values` bodies in a wasm instance of its own, while the page draws
// what the first read gave (src/ui/uses_worker.rs starts it, as a module worker, one per
// read). A message is { glue, wasm } (the URLs of the app's wasm-bindgen glue and wasm
// module, the page's own, which its CSP allows): the instance starts, so that it is ready
// when the page has bodies for it. A job adds { files, names, bodies } (the files the
// bodies are in, their names, the bodies as JSON) and a MessagePort to answer on. The
// bodies are read in 16 MiB slices, the next asked for while the app's `UsesRead` parses
// one (a browser's read of a slice costs a few ms whatever its size); the worker posts each
// slice's size to the page as progress. The answer is what `UsesRead.finish` returns (its
// buffers transferred, not copied), or { error } when the app could not start here or
// could not read. Jobs are done one after the other.
const SLICE = 16 << 20;
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
  let read;
  try {
    read = new (await app).UsesRead(bodies);
    for (let i = 0; i < read.count(); i++) {
      const file = files[names.indexOf(read.file(i))];
      if (!file) throw new Error(`${read.file(i)} was not handed over`);
      read.begin(i);
      const end = read.end(i);
      const slice = (at) => file.slice(at, Math.min(at + SLICE, end)).arrayBuffer();
      let next = slice(read.start(i));
      for (let at = read.start(i); at < end; at = Math.min(at + SLICE, end)) {
        const bytes = await next;
        if (at + SLICE < end) next = slice(at + SLICE);
        read.feed(new Uint8Array(bytes));
        postMessage(bytes.byteLength);
      }
    }
    const out = read.finish();
    port.postMessage(out, out.filter((x) => x instanceof ArrayBuffer));
  } catch (err) {
    port.postMessage({ error: String(err?.message ?? err) });
  } finally {
    read?.free();
  }
  port.close();
};

// Reads slices of dropped files off the page's main thread (src/ui/read/fetch.rs starts it as a
// Worker). In Chromium a Blob read copies its bytes on the thread that asked for them; here
// that is this worker, so the page parses one slice while the next ones are read.
// A request is { file, start, end } with a MessagePort to answer on: the bytes as a
// transferred ArrayBuffer (no copy), or a string saying why they could not be read.
onmessage = async ({ data: { file, start, end }, ports: [port] }) => {
  try {
    const bytes = await file.slice(start, end).arrayBuffer();
    port.postMessage(bytes, [bytes]);
  } catch (err) {
    port.postMessage(String(err?.message ?? err));
  }
  port.close();
};

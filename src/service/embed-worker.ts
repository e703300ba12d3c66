/** The embedding worker thread (WorkerEmbedder): loads the model, then answers each message with its texts' vectors. */
import { parentPort } from 'node:worker_threads';
import { minilmEmbedder } from './embedder.js';

const port = parentPort;
if (port) {
  try {
    const e = await minilmEmbedder();
    if (!e) port.postMessage({ error: 'the model packages are not installed' });
    else {
      // WebAssembly runs unoptimized until hot: warmed here so the first queries do not pay for it.
      for (let i = 0; i < 4; i++) await e.embed(['warm up', 'a longer sentence of a dozen words or so, to warm up every layer of the model']);
      port.on('message', (m: { id: number; texts: string[] }) => {
        e.embed(m.texts).then(
          (vectors) =>
            port.postMessage(
              { id: m.id, vectors },
              vectors.map((v) => v.buffer as ArrayBuffer),
            ),
          (err: unknown) => port.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) }),
        );
      });
      port.postMessage({ ready: true, model: e.model, dims: e.dims });
    }
  } catch (err) {
    port.postMessage({ error: err instanceof Error ? err.message : String(err) });
  }
}

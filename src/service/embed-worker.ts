/**
 * The embedding worker thread (see WorkerEmbedder): loads the model once, then embeds the texts
 * of each message and posts their vectors back, one message at a time.
 */
import { parentPort } from 'node:worker_threads';
import { minilmEmbedder } from './embedder.js';

const port = parentPort;
if (port) {
  try {
    const e = await minilmEmbedder();
    if (!e) port.postMessage({ error: 'the model packages are not installed' });
    else {
      // WebAssembly runs a first, unoptimized tier until its functions are hot: warm them here so
      // the first queries do not pay for it (a few hundred milliseconds, before `ready`).
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

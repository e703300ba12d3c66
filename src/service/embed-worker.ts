/**
 * The embedding worker thread (see WorkerEmbedder): loads the model once, then embeds the texts
 * of each message and posts their vectors back, one message at a time.
 */
import { parentPort } from 'node:worker_threads';
import { inlineEmbedder } from './embedder.js';

const port = parentPort;
if (port) {
  try {
    const e = await inlineEmbedder();
    if (!e) port.postMessage({ error: 'the model packages are not installed' });
    else {
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

/** The one network probe. */
import type { EvidenceStatus } from '../core/evidence.js';
import { lazy } from '../lazy.js';

const evidenceCheck = lazy<typeof import('../core/evidence.js')>('./core/evidence.js');

/** HEAD (GET when HEAD is refused) with a timeout; network trouble is unknown, never stale. */
export async function probeUrl(url: string, timeoutMs: number): Promise<{ status: EvidenceStatus; reason: string }> {
  for (const method of ['HEAD', 'GET']) {
    try {
      const res = await fetch(url, { method, redirect: 'follow', signal: AbortSignal.timeout(timeoutMs) });
      void res.body?.cancel();
      if (method === 'HEAD' && (res.status === 405 || res.status === 501)) continue;
      return evidenceCheck().httpStatus(res.status);
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      return { status: 'unknown', reason: `unreachable (${e.cause?.code ?? e.name})` };
    }
  }
  return { status: 'unknown', reason: 'no answer' };
}

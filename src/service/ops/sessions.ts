/** Short-term memory: `memory remember`, a session's hits, `memory session end`. */
import { NotFoundError, UsageError, ValidationError } from '../../core/errors.js';
import { initialImportance, intervalMs, markedImportant } from '../../core/lifecycle.js';
import { checkSession, type ShortTermEntry } from '../../store/sessions.js';
import { modules, type Engine } from '../engine.js';
import type { Caller } from '../caller.js';
import { apply, create } from './apply.js';
import { scanGroups } from './batch.js';

/** Short-term (session-local, expiring, never committed) with `shortTerm`, else a committed draft observation. */
export async function remember(
  engine: Engine,
  caller: Caller,
  projectName: string | undefined,
  input: string | Record<string, unknown>,
  opts: { session?: string; ttl?: string; shortTerm?: boolean; important?: boolean } = {},
): Promise<{ short_term: boolean; id: string; project: string; expires_at?: string; commit?: string | null }> {
  const project = caller.project(engine, projectName);
  const fields = typeof input === 'string' ? { summary: (input.split('\n')[0] ?? '').slice(0, 300), content: input } : input;
  const summary = String(fields.summary ?? '').trim();
  if (!summary) throw new ValidationError([{ path: 'text', message: 'is empty: nothing to remember' }], 'remember');
  if (opts.shortTerm) {
    if (!opts.session) throw new UsageError('--short-term needs --session NAME');
    const ttl = intervalMs(opts.ttl ?? '2h');
    if (ttl === null) throw new UsageError(`--ttl must look like 30m, 2h, 1d or 1w (got ${JSON.stringify(opts.ttl)})`);
    const who = { project, agent: await caller.agent(engine), operation: 'remember' };
    const [found = []] = await scanGroups(engine, caller, [modules.secretRules().secretFields(fields)], who);
    if (found.length) throw new ValidationError(found, 'remember');
    const now = caller.now();
    const entries = engine.sessions.read(opts.session, now.getTime());
    const content = String(fields.content ?? summary);
    const e: ShortTermEntry = {
      id: `st-${modules.ulid().ulid(now.getTime())}`,
      project,
      summary: summary.slice(0, 300),
      content,
      subject: String(fields.subject ?? knownSubject(engine, caller, project, `${summary} ${content}`)),
      tags: Array.isArray(fields.tags) ? fields.tags.map(String) : [],
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + ttl).toISOString(),
      importance: opts.important ? 1 : initialImportance({ summary, content, kind: String(fields.kind ?? 'other') }),
      accesses: 0,
      ...(opts.important || markedImportant(summary) || markedImportant(content) ? { important: true } : {}),
    };
    engine.sessions.write(opts.session, [...entries, e]);
    return { short_term: true, id: e.id, project, expires_at: e.expires_at };
  }
  const subject = knownSubject(engine, caller, project, `${summary} ${String(fields.content ?? '')}`);
  const entry = { ...observation(subject, 'remember:cli', 'remembered without evidence; confirm before relying on it'), content: summary, status: 'draft' };
  const r = await create(engine, caller, { ...entry, ...fields, summary }, { project });
  return { short_term: false, id: r.entry.id, project: r.project, commit: r.commit };
}

/** An observation without evidence: what `remember` commits and what a session keeps. */
function observation(subject: string, uri: string, note: string) {
  return { section: 'observations', kind: 'other', subject, scope: 'repo', confidence: 0.6, evidence: [{ type: 'assumption', uri, note }] };
}

/** The subject a note is about: one the project already uses when the note names it, else its own telling words. */
function knownSubject(engine: Engine, caller: Caller, project: string, text: string): string {
  const subjects = new Set<string>();
  for (const se of engine.snapshot(caller.warn).entries) if (se.project === project && se.meta.status === 'active') subjects.add(se.meta.subject);
  return modules.extraction().subjectOf(text, [...subjects].sort());
}

/** A session's unexpired entries matching half of `text`'s words as prefixes (all, without text), best first, then most important. */
export function sessionHits(engine: Engine, caller: Caller, session: string, text: string): ShortTermEntry[] {
  const now = caller.now().getTime();
  const entries = engine.sessions.read(session, now);
  const terms = modules.similarity().words(text);
  const share = new Map<string, number>();
  for (const e of entries) {
    const have = modules.similarity().words(`${e.summary} ${e.content} ${e.subject} ${e.tags.join(' ')}`);
    share.set(e.id, terms.length ? terms.filter((t) => have.some((w) => w.startsWith(t))).length / terms.length : 1);
  }
  const hits = entries.filter((e) => share.get(e.id)! >= 0.5);
  if (hits.length) {
    const ids = new Set(hits.map((h) => h.id));
    engine.sessions.write(
      session,
      entries.map((e) => (ids.has(e.id) ? { ...e, accesses: e.accesses + 1, importance: Math.min(1, Math.round((e.importance + 0.02) * 1000) / 1000) } : e)),
    );
  }
  return hits.sort((a, b) => share.get(b.id)! - share.get(a.id)! || b.importance - a.importance || (a.created_at < b.created_at ? 1 : -1));
}

/** Entries marked important or reaching the threshold become long-term observations; the rest go with the session. */
export async function sessionEnd(engine: Engine, caller: Caller, session: string, opts: { threshold?: number } = {}) {
  checkSession(session);
  if (!engine.sessions.exists(session)) throw new NotFoundError(`no short-term session ${session}`);
  const threshold = opts.threshold ?? 0.5;
  const entries = engine.sessions.read(session, caller.now().getTime());
  const keep = entries.filter((e) => e.important || e.importance >= threshold);
  const promoted: { short_term_id: string; id: string; project: string }[] = [];
  let commit: string | null = null;
  const byProject = new Map<string, ShortTermEntry[]>();
  for (const e of keep) byProject.set(e.project, [...(byProject.get(e.project) ?? []), e]);
  for (const [project, list] of byProject) {
    const r = await apply(
      engine,
      caller,
      list.map((e) => ({
        operation: 'create',
        entry: {
          ...observation(e.subject, `session:${session}`, `kept from short-term memory (importance ${e.importance})`),
          summary: e.summary,
          content: e.content,
          tags: [...new Set([...e.tags, 'session'])],
          lifecycle: { importance: e.importance, memory_type: 'episodic' },
        },
      })),
      { project },
    );
    commit = r.commit ?? commit;
    for (const a of r.applied) promoted.push({ short_term_id: list[a.index]!.id, id: a.id, project });
  }
  engine.sessions.remove(session);
  return { session, promoted, dropped: entries.length - promoted.length, commit };
}

/** validate-evidence, check-freshness, export and import. */
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import * as uc from '../../service/use-cases.js';
import type { Engine } from '../../service/engine.js';
import { UnsafePathError, UsageError } from '../../core/errors.js';
import { serializeEntry } from '../../core/entry.js';
import { parseFilters, type FilterInput } from '../../core/filters.js';
import { clip, FILTERS, type Command, commitNote } from '../io.js';

const FORMATS = ['json', 'jsonl', 'entries'] as const;

/** Exported memory stays inside the workspace: a path outside is refused, naming where to write instead. */
function insideForExport(engine: Engine, abs: string, what: string): string {
  try {
    return engine.ws.assertInside(abs, what);
  } catch (err) {
    if (!(err instanceof UnsafePathError)) throw err;
    const hint = `memory data stays inside the workspace; write it under ${engine.ws.root}, or to stdout with - and redirect it yourself`;
    throw new UnsafePathError(`${err.message}: ${hint}`, what);
  }
}

export const interchangeCommands: Command[] = [
  {
    cmd: 'validate-evidence [project]',
    describe: 'check every evidence URI (files followed through renames and line shifts, symbols, git permalinks, URLs); flag and list stale ones',
    options: {
      fix: { type: 'boolean', describe: 'rewrite evidence whose code moved (renames, shifted lines) in one commit' },
      offline: { type: 'boolean', describe: 'do not contact URLs (they stay "unknown")' },
      timeout: { type: 'number', describe: 'per-URL timeout in ms (default 5000)' },
    },
    async run(k, a) {
      const showProgress = k.progressBar(Boolean(a.json), 'checking');
      const r = await uc.validateEvidence(...k.open(a), a.project || undefined, {
        offline: Boolean(a.offline),
        fix: Boolean(a.fix),
        timeoutMs: a.timeout as number | undefined,
        onProgress: showProgress ? (done, total) => showProgress(done, total, 'checking') : undefined,
      });
      if (a.json) return k.printJson(r);
      const n = r.anchors;
      k.out(
        `${r.checked} evidence links checked: ${r.ok} ok, ${r.stale} stale, ${r.unknown} unknown (${r.skipped} assumptions not checkable); files: ${n.current} current, ${n.moved} moved, ${n.changed} changed, ${n.missing} missing`,
      );
      if (r.fixed?.length) {
        const where = r.commits?.map((c) => c.slice(0, 12)).join(', ') || 'the working tree (no commit)';
        k.table(
          r.fixed.map((f) => [f.id, f.from, f.to]),
          ['FIXED', 'FROM', 'TO'],
          `rewritten in ${where}`,
        );
      } else {
        const moved = r.entries.flatMap((e) => e.evidence.filter((x) => x.to).map((x) => [e.id, x.uri, x.to!]));
        if (moved.length) k.table(moved, ['ID', 'MOVED', 'TO'], 'run validate-evidence --fix to rewrite them');
      }
      const stale = r.entries.filter((e) => e.stale);
      if (stale.length) {
        k.table(
          stale.flatMap((e) => e.evidence.filter((x) => x.status === 'stale').map((x) => [e.id, x.type, clip(x.uri, 50), x.reason])),
          ['ID', 'TYPE', 'URI', 'WHY STALE'],
          'stale entries are flagged stale_evidence and ranked lower: re-check them, then update, supersede or reinforce them',
        );
      }
    },
  },
  {
    cmd: 'check-freshness [project]',
    describe: 'entries whose valid_to is past or within --days (default 7), and entries due for review',
    options: { days: { type: 'number', describe: 'warning window in days (default 7)' } },
    run(k, a) {
      const days = a.days as number | undefined;
      if (days !== undefined && days < 0) throw new UsageError(`--days must be a number >= 0 (got ${String(a.days)})`);
      const items = uc.checkFreshness(...k.open(a), { project: a.project || undefined, days });
      if (a.json) return k.printJson(items);
      if (items.length === 0) return k.out(`nothing expired, expiring within ${days ?? 7} days, or due for review`);
      k.table(
        items.map((i) => [
          i.state,
          i.id,
          i.subject,
          i.state === 'review_due' ? `every ${i.review_interval}, ${i.days} d overdue` : `valid_to ${i.valid_to!.slice(0, 10)} (${i.days} d)`,
          clip(i.summary, 60),
        ]),
        ['STATE', 'ID', 'SUBJECT', 'WHEN', 'SUMMARY'],
      );
    },
  },
  {
    cmd: 'export <project> <out>',
    describe: "write a project's entries (sorted by id) as a JSON array, JSONL, or one file per entry; - for stdout",
    options: {
      ...FILTERS,
      format: { type: 'string', choices: FORMATS, describe: 'json (default), jsonl, or entries (a folder of <id>.json)' },
      'min-confidence': { type: 'number', describe: 'default 0 for export' },
      status: { type: 'string', describe: 'comma list of statuses (default: any)' },
    },
    async run(k, a) {
      const [engine, caller] = k.open(a);
      const filters = parseFilters(a as FilterInput, caller.now());
      if (a.status === undefined) filters.status = 'any';
      if (a['min-confidence'] === undefined) filters.minConfidence = 0;
      if (a['include-expired'] === undefined) filters.includeExpired = true;
      const { renderExport } = await import('../../core/interchange.js');
      const entries = uc.exportEntries(engine, caller, String(a.project), filters);
      const format = (a.format as (typeof FORMATS)[number] | undefined) ?? 'json';
      const target = String(a.out);
      if (format === 'entries') {
        if (target === '-') throw new UsageError('--format entries writes a folder; name one instead of -');
        const dir = insideForExport(engine, resolve(k.caller.cwd, target), 'export folder');
        mkdirSync(dir, { recursive: true });
        for (const e of entries) writeFileSync(join(dir, `${e.id}.json`), serializeEntry(e));
      } else {
        const text = renderExport(entries, format);
        if (target === '-') {
          k.caller.stdout.write(text);
          return;
        }
        const file = insideForExport(engine, resolve(k.caller.cwd, target), 'export file');
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, text);
      }
      k.print(
        a,
        { project: a.project, format, count: entries.length, out: target },
        `exported ${entries.length} entries of ${String(a.project)} to ${target} (${format})`,
      );
    },
  },
  {
    cmd: 'import <project> <in>',
    describe:
      'validate every entry of a JSON array, JSONL, a folder of entry files, or an MCP memory.jsonl (--from mcp-memory), then import them as one commit',
    options: {
      in: { describe: 'file or folder inside the workspace, or - for stdin' },
      'on-conflict': {
        type: 'string',
        choices: ['skip', 'overwrite', 'merge'],
        describe: 'an id that already exists: skip (default), overwrite, or merge field by field',
      },
      'reassign-ids': {
        type: 'boolean',
        describe: 'copy the entries under new ids (links between them follow), e.g. into another project of this repository',
      },
      from: { type: 'string', choices: ['export', 'mcp-memory'], describe: 'input format (default: our own export)' },
    },
    async run(k, a) {
      const { mcpMemoryToEntries, parseExport, parseMcpMemory } = await import('../../core/interchange.js');
      const [engine, caller] = k.open(a);
      const project = String(a.project);
      const src = String(a.in);
      const source = src === '-' ? 'stdin' : src;
      // A file the user names is read wherever it is; only memory is written, inside.
      const abs = resolve(k.caller.cwd, src);
      let docs: unknown[];
      if (src !== '-' && statSync(abs, { throwIfNoEntry: false })?.isDirectory()) {
        if (a.from === 'mcp-memory') throw new UsageError('--from mcp-memory reads a memory.jsonl file, not a folder');
        const names = readdirSync(abs).filter((n) => n.endsWith('.json') && !n.startsWith('.'));
        docs = names.sort().flatMap((n) => parseExport(k.readTextInput(join(abs, n)).text, join(src, n)));
      } else {
        const text = k.readTextInput(src).text;
        if (a.from !== 'mcp-memory') docs = parseExport(text, source);
        else {
          const when = { now: caller.now().toISOString(), agent: await caller.agent(engine), source: src === '-' ? 'stdin' : basename(src) };
          docs = mcpMemoryToEntries(parseMcpMemory(text, source), when);
        }
      }
      const bar = docs.length >= 500 ? k.progressBar(Boolean(a.json), 'write') : undefined;
      const r = await uc.importEntries(engine, caller, project, docs, {
        onConflict: a['on-conflict'] as 'skip' | 'overwrite' | 'merge' | undefined,
        reassignIds: a['reassign-ids'] === true,
        source,
        onProgress: bar,
      });
      // Entries asked for, none imported, and not because all are here already: exit 1.
      const failed = docs.length > 0 && r.applied.length === 0 && !r.already_here;
      if (a.json) k.printJson(r);
      else {
        const by = (k: string): number => r.applied.filter((x) => x.action === k).length;
        k.out(
          `imported ${r.applied.length} entries into ${project} (${by('created')} new, ${by('overwritten')} overwritten, ${by('merged')} merged), skipped ${r.skipped.length}${commitNote(r.commit)}`,
        );
        k.capped(
          r.skipped.flatMap((s) => s.errors.map((e) => `  skipped ${s.id}: ${e.message}`)),
          (l) => k.out(l),
        );
        for (const w of r.warnings) k.warn(w);
        if (r.applied.length === 0 && r.already_here) k.out(`nothing new: every entry is already in ${project}`);
      }
      if (failed) {
        const elsewhere = r.skipped.some((s) => s.errors.some((e) => / exists in project /.test(e.message)));
        k.err(
          `error: nothing was imported into ${project}${elsewhere ? ": the entries' ids belong to another project; --reassign-ids imports copies under new ids" : ' (every entry was skipped, see above)'}`,
        );
        k.caller.setExitCode(1);
      }
    },
  },
];

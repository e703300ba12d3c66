/** `memory diff` for people, as text or Markdown (a pull-request comment); also how `git diff` shows an entry file (the textconv). */
import { parse, whole, type CitedCode, type ChangeKind, type EntryChange, type MemoryDiff } from './memory-diff.js';
import { entryLines } from './entry.js';

const happened = (c: CitedCode): string => `${c.change}${c.to ? ` to ${c.to}` : ''}`;

const MARK: Record<ChangeKind, string> = {
  created: '+',
  superseded: '~',
  deprecated: '-',
  archived: '-',
  restored: '^',
  edited: '*',
  moved: '>',
  removed: '!',
};

function headline(c: EntryChange): string {
  const bits = [
    c.kind,
    c.subject,
    c.scope ? `[${c.scope}]` : '',
    typeof c.confidence === 'number' ? `confidence ${c.confidence}` : '',
    c.evidence_types?.length ? `evidence: ${c.evidence_types.join(', ')}` : '',
  ]
    .filter(Boolean)
    .join('  ');
  const by = c.change === 'superseded' && c.superseded_by ? ` by ${c.superseded_by}` : '';
  return `${c.change === 'removed' ? 'REMOVED BY HAND' : c.change} ${c.id}${by}${bits ? `  ${bits}` : ''}`;
}

function grouped(d: MemoryDiff): Map<string, Map<string, EntryChange[]>> {
  const out = new Map<string, Map<string, EntryChange[]>>();
  for (const c of d.changes) {
    const p = out.get(c.project) ?? new Map<string, EntryChange[]>();
    p.set(c.section, [...(p.get(c.section) ?? []), c]);
    out.set(c.project, p);
  }
  return out;
}

function counts(d: MemoryDiff): string {
  const n = new Map<string, number>();
  for (const c of d.changes) n.set(c.change, (n.get(c.change) ?? 0) + 1);
  return [...n].map(([k, v]) => `${v} ${k}`).join(', ') || 'no entry changes';
}

export function renderText(d: MemoryDiff): string {
  const lines = [`memory changes ${d.base}..${d.head}: ${counts(d)}`];
  for (const [project, sections] of grouped(d)) {
    lines.push('', project);
    for (const [section, list] of sections) {
      lines.push(`  ${section}`);
      for (const c of list) {
        lines.push(`    ${MARK[c.change]} ${headline(c)}`);
        if (c.summary) lines.push(...indent(whole(c.summary, 'summary'), 8));
        for (const f of c.fields ?? []) {
          const [a, b] = [f.from, f.to];
          if (!a.includes('\n') && !b.includes('\n')) lines.push(`        ${f.field}: ${a} -> ${b}`);
          else lines.push(`        ${f.field} before:`, ...indent(a, 12), `        ${f.field} after:`, ...indent(b, 12));
        }
      }
    }
  }
  if (d.other_files.length) lines.push('', 'other memory files', ...d.other_files.map((f) => `    ${f.status} ${f.file}`));
  if (d.cited_code.length) {
    lines.push('', `memories to re-check (the change moved, modified or deleted code they cite)`);
    for (const c of d.cited_code)
      lines.push(`    ${c.touched ? '(updated here) ' : ''}${c.id}  ${c.project}  ${c.uri}: ${happened(c)}`, ...indent(whole(c.summary, 'summary'), 8));
  }
  if (d.warnings.length) lines.push('', 'for the reviewer', ...d.warnings.map((w) => `    ${w.level}: ${w.file}: ${w.message}`));
  return `${lines.join('\n')}\n`;
}

const indent = (s: string, n: number): string[] => s.split('\n').map((l) => `${' '.repeat(n)}${l}`);
/** Text in a Markdown table cell or list item: pipes and angle brackets escaped, line breaks kept. */
const mdCell = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\|/g, '\\|').replace(/\r?\n/g, '<br>');
const code = (s: string): string => (s.includes('`') ? `<code>${mdCell(s)}</code>` : `\`${s.replace(/\|/g, '\\|')}\``);

export function renderMarkdown(d: MemoryDiff): string {
  const lines = [`### Memory changes (${counts(d)})`, '', `\`${d.base}..${d.head}\``];
  for (const [project, sections] of grouped(d)) {
    lines.push('', `#### ${project}`);
    for (const [section, list] of sections) {
      lines.push(
        '',
        `**${section}**`,
        '',
        '| change | entry | kind · subject · scope | confidence | evidence | summary |',
        '| --- | --- | --- | --- | --- | --- |',
      );
      for (const c of list) {
        const what =
          c.change === 'superseded' && c.superseded_by ? `superseded by \`${c.superseded_by}\`` : c.change === 'removed' ? '**removed by hand**' : c.change;
        lines.push(
          `| ${what} | \`${c.id}\` | ${mdCell([c.kind, c.subject, c.scope].filter(Boolean).join(' · '))} | ${c.confidence ?? ''} | ${mdCell((c.evidence_types ?? []).join(', '))} | ${mdCell(c.summary ? whole(c.summary, 'summary') : '')} |`,
        );
      }
      const edits = list.filter((c) => c.fields?.length);
      for (const c of edits) {
        lines.push('', `<details><summary>${c.change} <code>${c.id}</code>: ${c.fields!.length} field${c.fields!.length === 1 ? '' : 's'}</summary>`, '');
        for (const f of c.fields!) lines.push(`- \`${f.field}\`: ${mdCell(f.from)} → ${mdCell(f.to)}`);
        lines.push('', '</details>');
      }
    }
  }
  if (d.other_files.length) lines.push('', '**Other memory files:** ' + d.other_files.map((f) => `\`${f.file}\` (${f.status})`).join(', '));
  if (d.cited_code.length) {
    lines.push(
      '',
      '#### Memories to re-check',
      '',
      'This change moved, modified or deleted code these memories cite. Update, supersede or re-confirm each one (`memory reinforce <id>` once checked); `memory validate-evidence --fix` rewrites evidence that only moved.',
      '',
      '| entry | summary | cited | what happened |',
      '| --- | --- | --- | --- |',
    );
    for (const c of d.cited_code) {
      const to = c.to ? ` to ${code(c.to)}` : '';
      lines.push(`| ${code(c.id)}${c.touched ? ' (updated here)' : ''} | ${mdCell(whole(c.summary, 'summary'))} | ${code(c.uri)} | ${c.change}${to} |`);
    }
  }
  if (d.warnings.length) {
    lines.push('', '#### For the reviewer', '');
    for (const w of d.warnings) lines.push(`- ${w.level === 'error' ? '❌' : '⚠️'} \`${w.file}\`: ${mdCell(w.message)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** An entry file as the textconv shows it; anything that is not a JSON object as it is. */
export function entryAsText(text: string): string {
  const e = parse(text);
  return e ? `${entryLines(e, (k) => `${k}: `).join('\n')}\n` : text;
}

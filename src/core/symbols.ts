/** Symbol anchors (`path#symbol=name`): where a file declares a name; an extent ends before the next declaration, as git's function context does. */
const ID = '[A-Za-z_$][\\w$]*';
const NOT_KEYWORD = '(?!(?:if|for|while|switch|catch|return|function|else|do|try|with|new|typeof|await|yield|super|this|throw|case|delete|void)\\b)';

/** Declaration patterns by language (`N`: the name), and their file extensions; `named`: only for a given name (too broad to cut extents with). */
type Lang = 'ts' | 'py' | 'go' | 'rs' | 'java';
const LANGS: Record<Lang, { ext: string[]; all: string[]; named?: string[] }> = {
  ts: {
    ext: ['ts', 'tsx', 'mts', 'cts', 'js', 'jsx', 'mjs', 'cjs'],
    all: [
      '^\\s*(?:export\\s+)?(?:default\\s+)?(?:declare\\s+)?(?:async\\s+)?function\\s*\\*?\\s*N\\b',
      '^\\s*(?:export\\s+)?(?:default\\s+)?(?:declare\\s+)?(?:abstract\\s+)?class\\s+N\\b',
      '^\\s*(?:export\\s+)?(?:declare\\s+)?(?:const\\s+)?(?:interface|type|enum|namespace|module)\\s+N\\b',
      '^(?:export\\s+)?(?:declare\\s+)?(?:const|let|var)\\s+N\\b',
      `^\\s*(?:(?:public|private|protected|static|async|override|readonly|abstract|get|set|declare)\\s+)*\\*?${NOT_KEYWORD}N\\s*(?:<[^>]*>)?\\s*\\((?:[^;]*\\{|\\s*)$`,
      '^\\s*(?:(?:public|private|protected|static|readonly)\\s+)*N\\s*[:=]\\s*(?:async\\s+)?(?:function\\b|\\([^)]*\\)\\s*(?::[^=]*)?=>|[A-Za-z_$][\\w$]*\\s*=>)',
    ],
    named: ['^\\s*(?:export\\s+)?(?:const|let|var)\\s+N\\b'],
  },
  py: {
    ext: ['py', 'pyi'],
    all: ['^\\s*(?:async\\s+)?def\\s+N\\b', '^\\s*class\\s+N\\b'],
    named: ['^N\\s*(?::[^=]*)?=[^=]'],
  },
  go: {
    ext: ['go'],
    all: ['^func\\s+(?:\\([^)]*\\)\\s*)?N\\b', '^\\s*type\\s+N\\b', '^(?:var|const)\\s+N\\b'],
    named: ['^\\t+N\\s*(?:=|\\s+[\\w*.\\[\\]{}]+\\s*(?:=|$|//))'],
  },
  rs: {
    ext: ['rs'],
    all: [
      '^\\s*(?:pub(?:\\([^)]*\\))?\\s+)?(?:(?:async|const|unsafe|default|extern(?:\\s+"[^"]*")?)\\s+)*fn\\s+N\\b',
      '^\\s*(?:pub(?:\\([^)]*\\))?\\s+)?(?:struct|enum|trait|type|mod|union|const|static(?:\\s+mut)?)\\s+N\\b',
      '^\\s*macro_rules!\\s*N\\b',
    ],
  },
  java: {
    ext: ['java'],
    all: [
      '^\\s*(?:(?:public|protected|private|static|abstract|final|sealed|non-sealed|strictfp)\\s+)*(?:class|interface|enum|record|@interface)\\s+N\\b',
      '^\\s*(?:@\\w+(?:\\([^)]*\\))?\\s+)*(?:(?:public|protected|private|static|abstract|final|synchronized|native|default|strictfp)\\s+)*(?:<[^>]+>\\s+)?(?!(?:return|new|throw|else|case)\\b)[\\w<>\\[\\],.?]+(?:\\s*<[^>]*>)?(?:\\[\\])*\\s+N\\s*\\(',
    ],
    named: ['^\\s*(?:(?:public|protected|private|static|final|volatile|transient)\\s+)*[\\w<>\\[\\],.?]+\\s+N\\s*(?:=|;)'],
  },
};

const EXT: Record<string, Lang> = Object.fromEntries(Object.entries(LANGS).flatMap(([l, { ext }]) => ext.map((e) => [e, l as Lang])));

function langsOf(path: string): Lang[] {
  const ext = /\.([A-Za-z]+)$/.exec(path)?.[1]?.toLowerCase() ?? '';
  const l = EXT[ext];
  return l ? [l] : (Object.keys(LANGS) as Lang[]);
}

const escapeRe = (s: string): string => s.replace(/[$.]/g, '\\$&');
const cache = new Map<string, RegExp>();

function patternFor(path: string, name: string | null): RegExp {
  const langs = langsOf(path);
  const key = `${langs.join(',')}\u0000${name ?? ''}`;
  let re = cache.get(key);
  if (!re) {
    const n = name === null ? ID : escapeRe(name);
    const ps = langs.flatMap((l) => [...LANGS[l].all, ...(name === null ? [] : (LANGS[l].named ?? []))]);
    // `$` ends an identifier too: `\b` does not see it as part of a word.
    // One pass: a name holding an "N" must not be substituted into again.
    re = new RegExp(ps.map((p) => `(?:${p.replace(/N(\\b)?/g, (_, b?: string) => (b ? `${n}(?![\\w$])` : n))})`).join('|'));
    if (cache.size > 500) cache.clear();
    cache.set(key, re);
  }
  return re;
}

/** The lines (1-based) where `text` declares `name` (a dotted name: its last part). */
export function declarationLines(text: string, name: string, path: string): number[] {
  const last = name.slice(name.lastIndexOf('.') + 1);
  if (!text.includes(last)) return [];
  const re = patternFor(path, last);
  return text.split('\n').flatMap((l, i) => (l.includes(last) && re.test(l) ? [i + 1] : []));
}

/** From the declaration on line `at` to the line before the next declaration of any name (or the end). */
export function symbolExtent(text: string, path: string, at: number): [number, number] {
  const lines = splitLines(text);
  const any = patternFor(path, null);
  for (const [k, l] of lines.slice(at).entries()) if (any.test(l)) return [at, at + k];
  return [at, Math.max(at, lines.length)];
}

/** A text's lines, without the empty one after a final newline. */
export function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * Git conflict markers in an entry file (a clone that never registered the merge driver), pure:
 * the sides they hold, which `memory doctor --fix` merges field by field.
 */

const START = /^<{7}(?: |$)/;
const BASE = /^\|{7}(?: |$)/;
const MID = /^={7}$/;
const END = /^>{7}(?: |$)/;

export function hasConflictMarkers(text: string): boolean {
  let open = false;
  for (const line of text.split('\n')) {
    if (START.test(line)) open = true;
    else if (open && END.test(line)) return true;
  }
  return false;
}

/**
 * The texts of ours, theirs and (diff3 style only) the ancestor, each with the lines outside the
 * conflicts; null when the markers do not nest as git writes them.
 */
export function conflictSides(text: string): { ours: string; theirs: string; base: string | null } | null {
  const ours: string[] = [];
  const theirs: string[] = [];
  const base: string[] = [];
  let sawBase = false;
  let state: 'out' | 'ours' | 'base' | 'theirs' = 'out';
  for (const line of text.split('\n')) {
    if (state === 'out' && START.test(line)) state = 'ours';
    else if (state === 'ours' && BASE.test(line)) {
      state = 'base';
      sawBase = true;
    } else if ((state === 'ours' || state === 'base') && MID.test(line)) state = 'theirs';
    else if (state === 'theirs' && END.test(line)) state = 'out';
    else if (state === 'out') {
      ours.push(line);
      theirs.push(line);
      base.push(line);
    } else if (state === 'ours') ours.push(line);
    else if (state === 'base') base.push(line);
    else theirs.push(line);
  }
  if (state !== 'out') return null;
  return { ours: ours.join('\n'), theirs: theirs.join('\n'), base: sawBase ? base.join('\n') : null };
}

// Shared by the corpus sections: a seeded generator of random values (every value is random,
// none is a real credential) and the shape of a sample.
export function generator(seed) {
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const pick = (a) => a[Math.floor(rand() * a.length)];
  const s = (alphabet, n) => Array.from({ length: n }, () => pick(alphabet)).join('');
  return { rand, pick, s };
}
export const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const HEX = '0123456789abcdef';
export const LOWER = 'abcdefghijklmnopqrstuvwxyz';
export const URLSAFE = `${ALNUM}-_`;
export const B64 = `${ALNUM}+/`;
export const b64 = (t) => Buffer.from(t).toString('base64');
export const b64url = (o) => Buffer.from(typeof o === 'string' ? o : JSON.stringify(o)).toString('base64url');

/** Each family's generators, `times` samples each: positives and negatives alike, so they stay in proportion. */
export function samples(families, times = 2) {
  const positives = [];
  const negatives = [];
  for (const [family, { pos, neg }] of Object.entries(families)) {
    pos.forEach((g, i) => { for (let k = 0; k < times; k++) positives.push({ family, provider: `${family}-${i}`, text: g() }); });
    neg.forEach((g, i) => { for (let k = 0; k < times; k++) negatives.push({ family, kind: `${family}-negative-${i}`, text: g() }); });
  }
  return { positives, negatives };
}

/**
 * Splits the daemon socket's byte stream into lines of at most `max` bytes, for both sides. Each
 * chunk is searched once for a newline (time linear in a message however it is cut); a line past
 * the limit is refused as soon as it passes it.
 */
export class LineReader {
  private chunks: Buffer[] = [];
  private size = 0;
  private stopped = false;

  constructor(
    private readonly max: number,
    private readonly onLine: (line: string) => void,
    /** A line passed `max` bytes: nothing more is read. */
    private readonly onTooLong: (bytes: number) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    while (!this.stopped) {
      const nl = chunk.indexOf(10, start);
      const part = chunk.subarray(start, nl < 0 ? chunk.length : nl);
      if (this.size + part.length > this.max) return this.refuse(this.size + part.length);
      if (nl < 0) {
        if (part.length) {
          this.chunks.push(part);
          this.size += part.length;
        }
        return;
      }
      // Decoded only once whole: a character cut between two chunks comes out right.
      const line = this.chunks.length ? Buffer.concat([...this.chunks, part], this.size + part.length) : part;
      this.chunks = [];
      this.size = 0;
      start = nl + 1;
      this.onLine(line.toString('utf8'));
    }
  }

  /** Stops reading; what was kept is dropped. */
  stop(): void {
    this.stopped = true;
    this.chunks = [];
    this.size = 0;
  }

  private refuse(bytes: number): void {
    this.stop();
    this.onTooLong(bytes);
  }
}

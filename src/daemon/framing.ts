/**
 * The daemon socket's framing, for both sides: one JSON message per line. Bytes are kept as they
 * arrive and each chunk is searched once for a newline, so reading a message costs time linear
 * in its size however it is cut; a message that grows past the limit is refused as soon as it
 * does, and what was kept of it is dropped.
 */

/** Splits a byte stream into lines of at most `max` bytes (without the newline). */
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

  /** Stops reading (the connection is going away); what was kept is dropped. */
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

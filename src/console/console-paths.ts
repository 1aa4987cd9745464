/** The console's URLs under its path ("" for a console at "/", else "/console"). */
export class ConsolePaths {
  constructor(readonly base: string) {}

  overview(): string {
    return `${this.base}/`;
  }
  events(query?: URLSearchParams): string {
    const q = query?.toString();
    return `${this.base}/events${q ? `?${q}` : ""}`;
  }
  event(id: string): string {
    return `${this.base}/events/${encodeURIComponent(id)}`;
  }
  replayEvent(id: string): string {
    return `${this.event(id)}/replay`;
  }
  replaySelected(): string {
    return `${this.base}/replay`;
  }
  replayMatching(query?: URLSearchParams): string {
    const q = query?.toString();
    return `${this.base}/replay-matching${q ? `?${q}` : ""}`;
  }
  deadLetters(): string {
    return `${this.base}/dead-letters`;
  }
  /** A dead letter's replay: its event's, or the letter itself when the history no longer has the event. */
  replayDeadLetter(id: string): string {
    return `${this.base}/dead-letters/${encodeURIComponent(id)}/replay`;
  }
  discardDeadLetter(id: string): string {
    return `${this.base}/dead-letters/${encodeURIComponent(id)}/discard`;
  }
  pause(task: string): string {
    return `${this.base}/tasks/${encodeURIComponent(task)}/pause`;
  }
  resume(task: string): string {
    return `${this.base}/tasks/${encodeURIComponent(task)}/resume`;
  }
  login(): string {
    return `${this.base}/login`;
  }
  logout(): string {
    return `${this.base}/logout`;
  }
  asset(name: string): string {
    return `${this.base}/assets/${name}`;
  }
}

/**
 * The processes a chaos campaign kills: the api (`node api/src/main.ts`) and the operator
 * (`node operator/src/main.ts`), each started as a user starts it, in a process group of
 * its own so that a kill can take the whole container (the process and the job programs it
 * spawned) or the process alone (its children live on as orphans, as after an OOM kill).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const API_MAIN = fileURLToPath(new URL('../../api/src/main.ts', import.meta.url));
const OPERATOR_MAIN = fileURLToPath(new URL('../../operator/src/main.ts', import.meta.url));

/** A SIGKILL of the process alone, or of its whole process group (the process and every job program it started). */
export type KillMode = 'process' | 'group';

interface LogLine {
  level?: number;
  msg?: string;
  [field: string]: unknown;
}

/** Every process group any ChaosProcess started: killed when this process exits, however it ends, so none outlives it. */
const everyGroup = new Set<number>();
process.once('exit', () => {
  for (const group of everyGroup) killGroup(group);
});

function killGroup(group: number): void {
  try {
    process.kill(-group, 'SIGKILL');
  } catch {
    // the group is empty
  }
}

/** Error lines kept per process, for the report of a failed campaign. */
const ERRORS_KEPT = 50;

/**
 * One restartable server process: `start` spawns it and resolves when its log says it is
 * ready; `kill` sends SIGKILL and resolves when it is gone; every process group it ever had
 * is killed by `dispose`, so orphaned job programs never outlive the campaign.
 */
export class ChaosProcess {
  readonly name: string;
  readonly #entry: string;
  readonly #env: () => Record<string, string>;
  readonly #ready: (line: LogLine) => boolean;
  readonly #groups = new Set<number>();
  #child: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();
  /** Error-level log lines (pino level ≥ 50) of every incarnation, newest last. */
  readonly errors: LogLine[] = [];
  starts = 0;
  kills = 0;

  constructor(name: string, entry: string, env: () => Record<string, string>, ready: (line: LogLine) => boolean) {
    this.name = name;
    this.#entry = entry;
    this.#env = env;
    this.#ready = ready;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  async start(timeoutMs = 60_000): Promise<void> {
    const child = spawn(process.execPath, [this.#entry], { cwd: ROOT, env: this.#env(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    this.#child = child;
    this.starts += 1;
    if (child.pid) {
      this.#groups.add(child.pid);
      everyGroup.add(child.pid);
    }
    this.#exited = new Promise((resolve) => child.once('exit', () => resolve()));
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr = (stderr + text).slice(-4000)));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name} was not ready within ${timeoutMs} ms: ${stderr}`)), timeoutMs);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`${this.name} exited (${code ?? signal}) before it was ready: ${stderr}`));
      });
      createInterface({ input: child.stdout! }).on('line', (text) => {
        if (!text.startsWith('{')) return;
        let line: LogLine;
        try {
          line = JSON.parse(text) as LogLine;
        } catch {
          return;
        }
        if ((line.level ?? 0) >= 50) {
          this.errors.push(line);
          if (this.errors.length > ERRORS_KEPT) this.errors.shift();
        }
        if (this.#ready(line)) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
  }

  /** SIGKILL, as the kernel or the kubelet would; resolves once the process is gone. */
  async kill(mode: KillMode): Promise<void> {
    const child = this.#child;
    if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
    this.kills += 1;
    try {
      process.kill(mode === 'group' ? -child.pid : child.pid, 'SIGKILL');
    } catch {
      // gone already
    }
    await this.#exited;
  }

  /** A clean stop (SIGTERM), as at the end of a campaign. */
  async stop(): Promise<void> {
    const child = this.#child;
    if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await this.#exited;
    clearTimeout(timer);
  }

  /** Kills whatever is left in every process group this process ever had (orphaned job programs included). */
  dispose(): void {
    for (const group of this.#groups) {
      killGroup(group);
      everyGroup.delete(group);
    }
  }
}

/** The api as `node api/src/main.ts`: ready at its `api listening` line (local jobs recovered by the outbox's first pass). */
export function apiProcess(name: string, env: () => Record<string, string>): ChaosProcess {
  return new ChaosProcess(name, API_MAIN, env, (line) => line.msg === 'api listening');
}

/** The operator as `node operator/src/main.ts`: ready at `operator started` (it leads once the killed leader's Lease expires). */
export function operatorProcess(name: string, env: () => Record<string, string>): ChaosProcess {
  return new ChaosProcess(name, OPERATOR_MAIN, env, (line) => line.msg === 'operator started');
}

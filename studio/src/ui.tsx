// Small pieces every page uses.
import type { ComponentChildren } from 'preact';
import { ApiError } from './api.ts';

/** An error as a person reads it: the api's localized detail, and what to do about a 402 or 429. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  let hint: string | null = null;
  if (error instanceof ApiError && error.status === 402) hint = 'Not enough AI minutes: start the trial or upgrade your plan (see your billing above).';
  if (error instanceof ApiError && error.retryAfter) hint = `Try again in ${error.retryAfter} s.`;
  return (
    <p class="error" role="alert">
      {message}
      {hint && <span class="hint"> {hint}</span>}
    </p>
  );
}

export function Field({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <label class="field">
      <span>{label}</span>
      {children}
    </label>
  );
}

export function ProgressBar({ value, label, marks }: { value: number; label: string; marks?: number[] }) {
  const percent = Math.max(0, Math.min(100, Math.round(value)));
  return (
    <div class="progress">
      <div class="bar" role="progressbar" aria-label={label} aria-valuemin={0} aria-valuemax={100} aria-valuenow={percent}>
        <div class="fill" style={{ width: `${percent}%` }} />
        {marks?.map((mark) => <span key={mark} class={`mark${percent >= mark ? ' reached' : ''}`} style={{ left: `${mark}%` }} title={`${mark}%`} />)}
      </div>
      <span class="percent">{percent}%</span>
    </div>
  );
}

export function formatMs(ms: number): string {
  const total = Math.max(0, ms) / 1000;
  const minutes = Math.floor(total / 60);
  const seconds = total - minutes * 60;
  return `${minutes}:${seconds.toFixed(2).padStart(5, '0')}`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(0)} KB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GB`;
}

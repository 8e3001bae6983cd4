// Export: settings, progress at the 5/30/85 marks from the project stream, completion, and the
// downloads: the video, the timeline files for an editor, the caption files.
import { useEffect, useState } from 'preact/hooks';
import { allPages, get, post, query, type Export } from './api.ts';
import type { ExportEvent } from './project.tsx';
import { ErrorNote, ProgressBar } from './ui.tsx';

/** The spec's export progress marks. */
export const EXPORT_MARKS = [5, 30, 85];
const TIMELINE_FORMATS = [
  ['fcpxml', 'Final Cut / Resolve (FCPXML)'],
  ['xmeml', 'Premiere (XML)'],
  ['mlt', 'Shotcut / Kdenlive (MLT)'],
  ['edl', 'EDL'],
  ['otio', 'OpenTimelineIO'],
] as const;
const CAPTION_FORMATS = ['srt', 'vtt', 'words', 'chapters'] as const;
const EXPORT_POLL_MS = 3000;

export function Exports({ projectId, lastEvent }: { projectId: string; lastEvent: ExportEvent | null }) {
  const [exports, setExports] = useState<Export[]>([]);
  const [progress, setProgress] = useState<Record<string, { value: number; message: string }>>({});
  const [error, setError] = useState<unknown>(null);
  const load = () => allPages<Export>(`/api/v1/projects/${projectId}/exports/`).then(setExports, setError);
  useEffect(() => void load(), [projectId]);

  useEffect(() => {
    if (!lastEvent) return;
    const id = String(lastEvent.data.export_uuid ?? '');
    if (lastEvent.event === 'export_progress') {
      const value = Number(lastEvent.data.progress ?? 0);
      setProgress((current) => {
        // progress events name no export: they belong to the one rendering
        const rendering = exports.find((candidate) => candidate.status === 'queued' || candidate.status === 'rendering');
        const key = id || rendering?.uuid || '';
        return { ...current, [key]: { value, message: String(lastEvent.data.message ?? '') } };
      });
    }
    void load();
  }, [lastEvent]);

  // exports are normally polled (the spec): every 3 s while one is queued or rendering
  const running = exports.some((candidate) => candidate.status === 'queued' || candidate.status === 'rendering');
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => void load(), EXPORT_POLL_MS);
    return () => clearInterval(timer);
  }, [running]);

  const start = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setError(null);
    try {
      const created = await post<Export>(`/api/v1/projects/${projectId}/exports/`, {
        name: String(form.get('name') ?? 'Export'),
        export_settings: {
          resolution: String(form.get('resolution')),
          aspect_ratio: String(form.get('aspect_ratio')),
          captions: { enabled: form.get('captions') === 'on' },
          audio: { normalize: form.get('normalize') === 'on' },
        },
      });
      setExports((current) => [created, ...current.filter((candidate) => candidate.uuid !== created.uuid)]);
    } catch (caught) {
      setError(caught);
    }
  };
  const download = async (item: Export) => {
    setError(null);
    try {
      const answer = await get<{ url: string }>(`/api/v1/exports/${item.uuid}/download`);
      location.assign(answer.url);
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <section aria-labelledby="export-title">
      <h2 id="export-title">Export</h2>
      <form class="row" onSubmit={(event) => void start(event)}>
        <label class="field">
          <span>Name</span>
          <input name="name" required maxLength={200} defaultValue="Final cut" />
        </label>
        <label class="field">
          <span>Resolution</span>
          <select name="resolution" defaultValue="720p">
            <option>720p</option>
            <option>1080p</option>
          </select>
        </label>
        <label class="field">
          <span>Aspect ratio</span>
          <select name="aspect_ratio" defaultValue="16:9">
            <option>16:9</option>
            <option>9:16</option>
            <option>1:1</option>
          </select>
        </label>
        <label class="check">
          <input name="captions" type="checkbox" /> Burn in captions
        </label>
        <label class="check">
          <input name="normalize" type="checkbox" /> Normalize loudness
        </label>
        <button type="submit">Export</button>
      </form>
      <ErrorNote error={error} />
      <ul class="exports">
        {exports.map((item) => {
          const live = progress[item.uuid];
          return (
            <li key={item.uuid} data-status={item.status}>
              <strong>{item.name}</strong> <span class={`status ${item.status}`}>{item.status}</span>
              {(item.status === 'queued' || item.status === 'rendering') && <ProgressBar value={live?.value ?? 0} label={`Export ${item.name}`} marks={EXPORT_MARKS} />}
              {live?.message && item.status !== 'completed' && <span class="muted"> {live.message}</span>}
              {item.status === 'failed' && item.error && <span class="error"> {item.error}</span>}
              {item.status === 'completed' && (
                <span class="downloads">
                  <button onClick={() => void download(item)}>Download video</button>
                  {CAPTION_FORMATS.map((format) => (
                    <a key={format} class="button secondary" href={`/api/v1/projects/${projectId}/captions${query({ format, export_id: item.uuid })}`} download>
                      {format}
                    </a>
                  ))}
                </span>
              )}
            </li>
          );
        })}
      </ul>
      <h3>Timeline files (the current cut, for an editor)</h3>
      <p class="downloads">
        {TIMELINE_FORMATS.map(([format, label]) => (
          <a key={format} class="button secondary" href={`/api/v1/projects/${projectId}/timeline${query({ format, download: true })}`} download>
            {label}
          </a>
        ))}
      </p>
    </section>
  );
}

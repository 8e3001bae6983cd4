// One project: its media (upload, processing), analysis, review, captions, drafts and exports.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { allPages, get, post, type Edit, type Estimate, type Export, type MediaItem, type Page, type Preset, type Project } from './api.ts';
import { Captions } from './captions.tsx';
import { Drafts } from './drafts.tsx';
import { Exports } from './exports.tsx';
import type { Session } from './main.tsx';
import { Review } from './review.tsx';
import { MEDIA_POLL_MS, openStream, PROJECT_EVENTS, USER_EVENTS } from './streams.ts';
import { ErrorNote, Field, formatBytes, ProgressBar } from './ui.tsx';
import { unfinishedUploads, Upload, UploadCancelled, type UploadProgress } from './upload.ts';

/** The latest export event of the project stream, for the export panel. */
export interface ExportEvent {
  event: string;
  data: Record<string, unknown>;
}

export function ProjectPage({ id, session }: { id: string; session: Session }) {
  const [project, setProject] = useState<Project | null>(null);
  const [media, setMedia] = useState<MediaItem[]>([]);
  const [edits, setEdits] = useState<Edit[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [analysis, setAnalysis] = useState<{ step: string; progress: number } | null>(null);
  const [exportEvent, setExportEvent] = useState<ExportEvent | null>(null);
  const [streamOpen, setStreamOpen] = useState(false);

  const loadProject = useCallback(async () => {
    const read = await get<Project>(`/api/v1/projects/${id}`);
    setProject(read);
    if (read.active_run_id) setEdits((await get<{ data: Edit[] }>(`/api/v1/projects/${id}/edits/`)).data);
  }, [id]);
  const loadMedia = useCallback(async () => {
    setMedia(await allPages<MediaItem>('/api/v1/media', { scope: 'project', scope_project_id: id }));
  }, [id]);

  useEffect(() => {
    loadProject().catch(setError);
    loadMedia().catch(setError);
  }, [loadProject, loadMedia]);

  // media_ready / media_failed from the user stream; a refresh when it (re)connects covers what it missed
  useEffect(() => {
    const stream = openStream('/api/v1/user-stream', USER_EVENTS, () => void loadMedia().catch(setError), (open) => {
      setStreamOpen(open);
      if (open) void loadMedia().catch(setError);
    });
    return () => stream.close();
  }, [loadMedia]);

  // the spec's fallback: every 3 s while an item is pending or processing and the stream is down
  const processing = media.some((item) => item.status === 'pending' || item.status === 'processing');
  useEffect(() => {
    if (!processing || streamOpen) return;
    const timer = setInterval(() => void loadMedia().catch(setError), MEDIA_POLL_MS);
    return () => clearInterval(timer);
  }, [processing, streamOpen, loadMedia]);

  useEffect(() => {
    const stream = openStream(`/api/v1/projects/${id}/events`, PROJECT_EVENTS, (event, data) => {
      if (event === 'analysis_started') setAnalysis({ step: 'queued', progress: 0 });
      else if (event === 'analysis_progress') setAnalysis({ step: String(data.step ?? ''), progress: Number(data.progress ?? 0) });
      else if (event === 'analysis_complete' || event === 'analysis_failed') {
        setAnalysis(null);
        if (event === 'analysis_failed') setError(new Error(String(data.error ?? 'The analysis failed.')));
        session.refreshBilling();
        void loadProject().catch(setError);
      } else setExportEvent({ event, data });
    });
    return () => stream.close();
  }, [id, loadProject]);

  if (!project) return <main>{error ? <ErrorNote error={error} /> : <p role="status">Loading…</p>}</main>;
  const main = media.find((item) => item.status === 'uploaded' && item.has_audio) ?? media.find((item) => item.status === 'uploaded');
  const analyzing = project.status === 'analyzing' || analysis !== null;
  return (
    <main class="project">
      <h1>{project.name}</h1>
      <p class="muted">
        Status: <span class={`status ${project.status}`}>{project.status}</span>
      </p>
      <ErrorNote error={error} />
      <MediaPanel projectId={id} media={media} onChange={() => void loadMedia().catch(setError)} />
      {main && (
        <AnalyzePanel
          projectId={id}
          analyzing={analyzing}
          progress={analysis}
          onStarted={() => {
            setAnalysis({ step: 'queued', progress: 0 });
            void loadProject().catch(setError);
            session.refreshBilling();
          }}
        />
      )}
      {project.active_run_id && main && project.transcript && (
        <>
          <Review project={project} media={main} edits={edits} onEdits={setEdits} />
          <Captions projectId={id} runId={project.active_run_id} />
          <Drafts projectId={id} edits={edits} onOpened={() => void loadProject().catch(setError)} />
          <Exports projectId={id} lastEvent={exportEvent} />
        </>
      )}
    </main>
  );
}

function MediaPanel({ projectId, media, onChange }: { projectId: string; media: MediaItem[]; onChange: () => void }) {
  const [upload, setUpload] = useState<Upload | null>(null);
  const [progress, setProgress] = useState<UploadProgress | null>(null);
  const [error, setError] = useState<unknown>(null);
  const input = useRef<HTMLInputElement>(null);
  const unfinished = unfinishedUploads(projectId);

  const start = async (file: File) => {
    const next = new Upload(projectId, file, setProgress);
    setUpload(next);
    setError(null);
    setProgress({ loaded: 0, total: file.size });
    try {
      await next.run();
      onChange();
    } catch (caught) {
      if (!(caught instanceof UploadCancelled)) setError(caught);
    } finally {
      setUpload(null);
      setProgress(null);
      if (input.current) input.current.value = '';
    }
  };
  return (
    <section aria-labelledby="media-title">
      <h2 id="media-title">Media</h2>
      {media.length > 0 && (
        <ul class="media">
          {media.map((item) => (
            <li key={item.uuid} data-status={item.status}>
              <span>{item.display_name ?? item.original_filename}</span> <span class={`status ${item.status}`}>{item.status}</span>
              {item.size_bytes !== null && <span class="muted"> {formatBytes(item.size_bytes)}</span>}
              {item.error && <span class="error"> {item.error}</span>}
            </li>
          ))}
        </ul>
      )}
      {unfinished.length > 0 && !upload && (
        <p class="hint" role="status">
          Unfinished upload: {unfinished.join(', ')}. Choose the same file again to go on where it stopped.
        </p>
      )}
      <Field label="Upload a recording (video or audio)">
        <input ref={input} type="file" accept="video/*,audio/*" disabled={upload !== null} onChange={(event) => {
          const file = (event.currentTarget as HTMLInputElement).files?.[0];
          if (file) void start(file);
        }} />
      </Field>
      {upload && progress && (
        <div class="upload">
          <ProgressBar value={(progress.loaded / Math.max(1, progress.total)) * 100} label={`Uploading ${upload.file.name}`} />
          <button class="secondary" onClick={() => upload.cancel()}>
            Cancel upload
          </button>
        </div>
      )}
      <ErrorNote error={error} />
    </section>
  );
}

function AnalyzePanel({ projectId, analyzing, progress, onStarted }: { projectId: string; analyzing: boolean; progress: { step: string; progress: number } | null; onStarted: () => void }) {
  const [presets, setPresets] = useState<Preset[]>([]);
  const [presetId, setPresetId] = useState('');
  const [pacing, setPacing] = useState(50);
  const [sensitivity, setSensitivity] = useState(50);
  const [language, setLanguage] = useState('');
  const [estimate, setEstimate] = useState<Estimate | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    get<Preset[] | Page<Preset>>('/api/v1/users/me/presets').then((answer) => {
      const list = Array.isArray(answer) ? answer : answer.data;
      setPresets(list);
      const preferred = list.find((preset) => preset.is_default);
      if (preferred) setPresetId(preferred.uuid);
    }, setError);
    get<Estimate>(`/api/v1/projects/${projectId}/estimated-credits`).then(setEstimate, () => undefined);
  }, [projectId]);
  const preset = presets.find((candidate) => candidate.uuid === presetId);
  const [presetName, setPresetName] = useState('My settings');
  const savePreset = async () => {
    const name = presetName.trim();
    if (!name) return;
    setError(null);
    try {
      const created = await post<Preset>('/api/v1/users/me/presets', { name, pacing_level: pacing, false_start_sensitivity: sensitivity, language: language.trim() || null, audio_clean: false, censorship_mode: 'none' });
      setPresets((current) => [...current, created]);
      setPresetId(created.uuid);
    } catch (caught) {
      setError(caught);
    }
  };
  const analyze = async () => {
    setError(null);
    try {
      const body = preset ? { preset_id: preset.uuid } : { pacing_level: pacing, false_start_sensitivity: sensitivity, language: language.trim() || null };
      await post(`/api/v1/projects/${projectId}/analyze`, body);
      onStarted();
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <section aria-labelledby="analyze-title">
      <h2 id="analyze-title">Analyze</h2>
      <div class="row">
        <Field label="Preset">
          <select aria-label="Preset" value={presetId} onChange={(event) => setPresetId((event.currentTarget as HTMLSelectElement).value)}>
            <option value="">Custom settings</option>
            {presets.map((candidate) => (
              <option key={candidate.uuid} value={candidate.uuid}>
                {candidate.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label={`Pacing ${preset?.pacing_level ?? pacing}`}>
          <input type="range" min={0} max={100} value={preset?.pacing_level ?? pacing} disabled={!!preset} onInput={(event) => setPacing(Number((event.currentTarget as HTMLInputElement).value))} />
        </Field>
        <Field label={`False-start sensitivity ${preset?.false_start_sensitivity ?? sensitivity}`}>
          <input type="range" min={0} max={100} value={preset?.false_start_sensitivity ?? sensitivity} disabled={!!preset} onInput={(event) => setSensitivity(Number((event.currentTarget as HTMLInputElement).value))} />
        </Field>
        <Field label="Language (blank: detect)">
          <input value={preset ? preset.language ?? '' : language} disabled={!!preset} size={4} onInput={(event) => setLanguage((event.currentTarget as HTMLInputElement).value)} />
        </Field>
      </div>
      {estimate && (
        <p class={estimate.sufficient ? 'muted' : 'error'} data-testid="estimate">
          About {estimate.estimated_minutes.toFixed(1)} AI minutes; you have {estimate.balance.toFixed(1)}.
        </p>
      )}
      <div class="row">
        <button onClick={() => void analyze()} disabled={analyzing}>
          {analyzing ? 'Analyzing…' : 'Analyze'}
        </button>
        {!preset && (
          <>
            <Field label="Preset name">
              <input value={presetName} maxLength={100} onInput={(event) => setPresetName((event.currentTarget as HTMLInputElement).value)} />
            </Field>
            <button class="secondary" onClick={() => void savePreset()}>
              Save as preset
            </button>
          </>
        )}
      </div>
      {progress && <ProgressBar value={progress.progress} label={`Analysis: ${progress.step}`} />}
      {progress && <span class="muted"> {progress.step}</span>}
      <ErrorNote error={error} />
    </section>
  );
}

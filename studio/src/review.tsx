// Review: the suggested cuts on the transcript (struck through in place, with reason and
// confidence), in a list sortable by confidence, and on the waveform as regions whose edges
// drag (snapped to the frame grid, refused where the api refuses); accept or reject one or all
// past a confidence; the proxy plays with the active cuts skipped; a cut can be auditioned.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import WaveSurfer from 'wavesurfer.js';
import RegionsPlugin, { type Region } from 'wavesurfer.js/plugins/regions';
import { get, isSuggestion, patch, query, type Edit, type MediaItem, type Playback, type Project, type TranscriptWord } from './api.ts';
import { Transcript } from './transcript.tsx';
import { ErrorNote, formatMs } from './ui.tsx';

/** Seconds of context around a cut when auditioning it. */
const AUDITION_CONTEXT_S = 2;

interface FrameRate {
  num: number;
  den: number;
}

/**
 * A time moved to the nearest frame edge of the source's rate (ms, as the api takes them),
 * never past the recording's end (the nearest edge of a last partial frame lies beyond it).
 */
export function snapToFrame(ms: number, rate: FrameRate | null, durationMs: number): number {
  if (!rate) return Math.min(durationMs, Math.round(ms));
  const frameMs = (1000 * rate.den) / rate.num;
  const nearest = Math.round(ms / frameMs);
  return Math.round((nearest * frameMs > durationMs ? Math.floor(durationMs / frameMs) : nearest) * frameMs);
}

type SortKey = 'time' | 'confidence';

export function Review({ project, media, edits, onEdits }: { project: Project; media: MediaItem; edits: Edit[]; onEdits: (edits: Edit[]) => void }) {
  const [error, setError] = useState<unknown>(null);
  const [rate, setRate] = useState<FrameRate | null>(null);
  const [playback, setPlayback] = useState<Playback | null>(null);
  const [sort, setSort] = useState<{ key: SortKey; descending: boolean }>({ key: 'confidence', descending: true });
  const [selected, setSelected] = useState<string | null>(null);
  const [threshold, setThreshold] = useState(0.8);
  const [skipCuts, setSkipCuts] = useState(true);
  const video = useRef<HTMLVideoElement>(null);
  const waveform = useRef<HTMLDivElement>(null);
  const regions = useRef<RegionsPlugin | null>(null);
  /** Bumped when a waveform is made: the regions are drawn on it. */
  const [surfaces, setSurfaces] = useState(0);
  /** Where an audition stops, and whether it skips the cut it plays around. */
  const audition = useRef<{ stopAt: number; skip: boolean } | null>(null);
  const editsRef = useRef(edits);
  editsRef.current = edits;
  const skipRef = useRef(skipCuts);
  skipRef.current = skipCuts;

  const words: TranscriptWord[] = project.transcript?.words ?? [];
  const suggestions = useMemo(() => {
    const list = edits.filter(isSuggestion);
    const value = (edit: Edit) => (sort.key === 'time' ? edit.start_ms : edit.confidence ?? -1);
    return list.sort((a, b) => (sort.descending ? value(b) - value(a) : value(a) - value(b)) || a.start_ms - b.start_ms);
  }, [edits, sort]);

  // the frame grid: the rate of the project's timeline (the source's own)
  useEffect(() => {
    get<{ frame_rate: FrameRate }>(`/api/v1/projects/${project.uuid}/timeline${query({ format: 'otio' })}`).then(
      (timeline) => setRate(timeline.frame_rate),
      () => setRate(null),
    );
  }, [project.uuid, project.active_run_id]);

  const loadPlayback = () => get<Playback>(`/api/v1/media/${media.uuid}/proxy`).then(setPlayback, setError);
  useEffect(() => void loadPlayback(), [media.uuid]);

  /** Replaces one edit by the api's answer. */
  const save = async (uuid: string, change: Partial<Pick<Edit, 'active' | 'start_ms' | 'end_ms'>>) => {
    const updated = await patch<Edit>(`/api/v1/edits/${uuid}`, change);
    onEdits(editsRef.current.map((edit) => (edit.uuid === uuid ? updated : edit)));
    return updated;
  };
  const setActive = (uuids: string[], active: boolean) => {
    setError(null);
    Promise.all(uuids.map((uuid) => patch<Edit>(`/api/v1/edits/${uuid}`, { active }))).then(
      (updated) => {
        const byId = new Map(updated.map((edit) => [edit.uuid, edit]));
        onEdits(editsRef.current.map((edit) => byId.get(edit.uuid) ?? edit));
      },
      setError,
    );
  };

  // the waveform from the api's peaks, playing through the video element; a region per suggestion
  useEffect(() => {
    if (!waveform.current || !video.current || !media.waveform_peaks || !media.duration_ms) return;
    const duration = media.duration_ms;
    const plugin = RegionsPlugin.create();
    const surfer = WaveSurfer.create({
      container: waveform.current,
      media: video.current,
      peaks: [media.waveform_peaks],
      duration: media.duration_ms / 1000,
      height: 96,
      waveColor: '#6b7a90',
      progressColor: '#1f4e8c',
      cursorColor: '#c2410c',
      plugins: [plugin],
    });
    regions.current = plugin;
    setSurfaces((count) => count + 1);
    plugin.on('region-updated', (region: Region, side?: 'start' | 'end') => {
      const edit = editsRef.current.find((candidate) => candidate.uuid === region.id);
      if (!edit) return;
      // only the edge dragged moves, onto the frame grid; the other stays where the api has it
      const start_ms = side === 'end' ? edit.start_ms : snapToFrame(region.start * 1000, rate, duration);
      const end_ms = side === 'start' ? edit.end_ms : snapToFrame(region.end * 1000, rate, duration);
      region.setOptions({ start: start_ms / 1000, end: end_ms / 1000 });
      setError(null);
      save(edit.uuid, { start_ms, end_ms }).catch((caught: unknown) => {
        // the api refused the new edges: the region goes back where the edit is
        region.setOptions({ start: edit.start_ms / 1000, end: edit.end_ms / 1000 });
        setError(caught);
      });
    });
    plugin.on('region-clicked', (region: Region, event: MouseEvent) => {
      event.stopPropagation();
      setSelected(region.id);
    });
    return () => {
      regions.current = null;
      surfer.destroy();
    };
  }, [media.uuid, playback !== null, rate]);

  // regions follow the edits
  useEffect(() => {
    const plugin = regions.current;
    if (!plugin) return;
    plugin.clearRegions();
    for (const edit of edits.filter(isSuggestion)) {
      plugin.addRegion({
        id: edit.uuid,
        start: edit.start_ms / 1000,
        end: edit.end_ms / 1000,
        drag: false,
        resize: true,
        color: edit.uuid === selected ? 'rgba(194, 65, 12, 0.45)' : edit.active ? 'rgba(185, 28, 28, 0.28)' : 'rgba(100, 116, 139, 0.22)',
      });
    }
  }, [edits, selected, surfaces]);

  // preview: active cuts skipped while playing; an audition stops at its end
  useEffect(() => {
    const element = video.current;
    if (!element) return;
    let frame = 0;
    const tick = () => {
      const ms = element.currentTime * 1000;
      const run = audition.current;
      if (run && element.currentTime >= run.stopAt) {
        element.pause();
        audition.current = null;
      }
      const skip = run ? run.skip : skipRef.current;
      if (skip) {
        const cut = editsRef.current.find((edit) => edit.active && ms >= edit.start_ms && ms < edit.end_ms - 1);
        if (cut) element.currentTime = cut.end_ms / 1000;
      }
      if (!element.paused) frame = requestAnimationFrame(tick);
    };
    const onPlay = () => (frame = requestAnimationFrame(tick));
    element.addEventListener('play', onPlay);
    return () => {
      element.removeEventListener('play', onPlay);
      cancelAnimationFrame(frame);
    };
  }, [playback]);

  const selectedEdit = edits.find((edit) => edit.uuid === selected) ?? null;
  const hear = (edit: Edit, skip: boolean) => {
    const element = video.current;
    if (!element) return;
    audition.current = { stopAt: edit.end_ms / 1000 + AUDITION_CONTEXT_S, skip };
    element.currentTime = Math.max(0, edit.start_ms / 1000 - AUDITION_CONTEXT_S);
    void element.play().catch(() => undefined);
  };
  const select = (edit: Edit | undefined) => {
    if (!edit) return;
    setSelected(edit.uuid);
    if (video.current) video.current.currentTime = Math.max(0, edit.start_ms / 1000 - 1);
    document.getElementById(`suggestion-${edit.uuid}`)?.scrollIntoView({ block: 'nearest' });
  };

  // keyboard: space plays or pauses, J/K next and previous suggestion, A accepts, R rejects
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement;
      if (event.ctrlKey || event.metaKey || event.altKey || ['INPUT', 'TEXTAREA', 'SELECT', 'BUTTON'].includes(target.tagName) || target.isContentEditable) return;
      const index = suggestions.findIndex((edit) => edit.uuid === selected);
      const key = event.key.toLowerCase();
      if (key === ' ') {
        const element = video.current;
        if (element) void (element.paused ? element.play().catch(() => undefined) : element.pause());
      } else if (key === 'j') select(suggestions[Math.min(suggestions.length - 1, index + 1)]);
      else if (key === 'k') select(suggestions[Math.max(0, index - 1)]);
      else if ((key === 'a' || key === 'r') && selectedEdit) setActive([selectedEdit.uuid], key === 'a');
      else return;
      event.preventDefault();
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [suggestions, selected, selectedEdit]);

  const above = suggestions.filter((edit) => (edit.confidence ?? 0) >= threshold);
  const below = suggestions.filter((edit) => (edit.confidence ?? 0) < threshold);
  const sortBy = (key: SortKey) => setSort((current) => ({ key, descending: current.key === key ? !current.descending : key === 'confidence' }));
  const ariaSort = (key: SortKey) => (sort.key === key ? (sort.descending ? 'descending' : 'ascending') : 'none');
  const activeCount = edits.filter((edit) => edit.active).length;

  return (
    <section aria-labelledby="review-title" class="review">
      <h2 id="review-title">Review</h2>
      <p class="muted">
        {suggestions.length} suggested cuts, {activeCount} active. Keys: <kbd>Space</kbd> play/pause, <kbd>J</kbd>/<kbd>K</kbd> next/previous, <kbd>A</kbd> accept, <kbd>R</kbd> reject.
      </p>
      <ErrorNote error={error} />
      <div class="player">
        <video ref={video} src={playback?.url} controls preload="metadata" aria-label="Preview" onError={() => void loadPlayback()} />
        <div class="player-controls">
          <label class="check">
            <input type="checkbox" checked={skipCuts} onChange={(event) => setSkipCuts((event.currentTarget as HTMLInputElement).checked)} /> Preview the edit (skip active cuts)
          </label>
          {selectedEdit && (
            <span class="audition">
              <button class="secondary" onClick={() => hear(selectedEdit, true)}>
                Hear with the cut
              </button>
              <button class="secondary" onClick={() => hear(selectedEdit, false)}>
                Hear without it
              </button>
            </span>
          )}
        </div>
      </div>
      <div ref={waveform} class="waveform" aria-label="Waveform with the suggested cuts" role="img" />
      <div class="bulk row">
        <label class="field">
          <span>Confidence {Math.round(threshold * 100)}%</span>
          <input type="range" min={0} max={100} value={Math.round(threshold * 100)} onInput={(event) => setThreshold(Number((event.currentTarget as HTMLInputElement).value) / 100)} />
        </label>
        <button onClick={() => setActive(above.map((edit) => edit.uuid), true)} disabled={above.length === 0}>
          Accept all ≥ {Math.round(threshold * 100)}% ({above.length})
        </button>
        <button class="secondary" onClick={() => setActive(below.map((edit) => edit.uuid), false)} disabled={below.length === 0}>
          Reject all below ({below.length})
        </button>
      </div>
      <div class="table-wrap">
        <table class="suggestions">
          <caption>Suggested cuts</caption>
          <thead>
            <tr>
              <th aria-sort={ariaSort('time')}>
                <button class="link" onClick={() => sortBy('time')}>
                  Time
                </button>
              </th>
              <th>Kind</th>
              <th>Reason</th>
              <th aria-sort={ariaSort('confidence')}>
                <button class="link" onClick={() => sortBy('confidence')}>
                  Confidence
                </button>
              </th>
              <th>Cut</th>
            </tr>
          </thead>
          <tbody>
            {suggestions.map((edit) => (
              <tr key={edit.uuid} id={`suggestion-${edit.uuid}`} class={edit.uuid === selected ? 'selected' : ''} onClick={() => select(edit)} data-active={edit.active}>
                <td>
                  {formatMs(edit.start_ms)}–{formatMs(edit.end_ms)}
                </td>
                <td>{edit.type.replace('_', ' ')}</td>
                <td>{edit.reason}</td>
                <td>{edit.confidence === null ? '—' : `${Math.round(edit.confidence * 100)}%`}</td>
                <td>
                  <button class={edit.active ? '' : 'secondary'} aria-pressed={edit.active} onClick={(event) => {
                    event.stopPropagation();
                    setSelected(edit.uuid);
                    setActive([edit.uuid], !edit.active);
                  }}>
                    {edit.active ? 'Accepted' : 'Rejected'}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Transcript words={words} edits={edits} selected={selected} onSelect={(uuid) => select(edits.find((edit) => edit.uuid === uuid))} />
    </section>
  );
}

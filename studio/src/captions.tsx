// Caption lines of the active run, edited line by line (the original text stays beside).
import { useEffect, useState } from 'preact/hooks';
import { allPages, patch, post, query, type CaptionLine } from './api.ts';
import { ErrorNote } from './ui.tsx';

export function Captions({ projectId, runId }: { projectId: string; runId: string }) {
  const [lines, setLines] = useState<CaptionLine[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const load = () => allPages<CaptionLine>(`/api/v1/projects/${projectId}/caption-lines`).then(setLines, setError);
  useEffect(() => void load(), [projectId, runId]);
  const generate = async (maxWords: number) => {
    setError(null);
    try {
      await post(`/api/v1/projects/${projectId}/caption-lines/generate${query({ max_words: maxWords, force: true })}`);
      await load();
    } catch (caught) {
      setError(caught);
    }
  };
  const edit = async (line: CaptionLine, text: string) => {
    if (text === line.text) return;
    setError(null);
    try {
      const updated = await patch<CaptionLine>(`/api/v1/caption-lines/${line.uuid}`, { text });
      setLines((current) => current?.map((candidate) => (candidate.uuid === line.uuid ? updated : candidate)) ?? null);
      setSaved(line.uuid);
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <section aria-labelledby="captions-title">
      <h2 id="captions-title">Captions</h2>
      <div class="row">
        <button class="secondary" onClick={() => void generate(7)}>
          Make lines for 16:9 (7 words)
        </button>
        <button class="secondary" onClick={() => void generate(4)}>
          Make lines for 9:16 (4 words)
        </button>
      </div>
      <ErrorNote error={error} />
      {lines && lines.length === 0 && <p class="muted">No caption lines yet.</p>}
      {lines && lines.length > 0 && (
        <ol class="captions">
          {lines.map((line, index) => (
            <li key={line.uuid}>
              <input
                aria-label={`Caption line ${index + 1}`}
                value={line.text}
                onKeyDown={(event) => event.key === 'Enter' && (event.currentTarget as HTMLInputElement).blur()}
                onBlur={(event) => void edit(line, (event.currentTarget as HTMLInputElement).value)}
              />
              {line.text !== line.original_text && <span class="muted"> was: {line.original_text}</span>}
              {saved === line.uuid && <span class="ok"> saved</span>}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

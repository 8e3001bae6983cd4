// Drafts: the current state of every cut saved under a name, and reopened later (its overrides
// are applied to the edits again).
import { useEffect, useState } from 'preact/hooks';
import { get, patch, post, type Draft, type Edit, type EditOverride } from './api.ts';
import { ErrorNote } from './ui.tsx';

export function Drafts({ projectId, edits, onOpened }: { projectId: string; edits: Edit[]; onOpened: () => void }) {
  const [drafts, setDrafts] = useState<Draft[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [note, setNote] = useState<string | null>(null);
  const load = () => get<Draft[] | { data: Draft[] }>(`/api/v1/projects/${projectId}/drafts/`).then((answer) => setDrafts(Array.isArray(answer) ? answer : answer.data), setError);
  useEffect(() => void load(), [projectId]);

  const save = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const overrides: Record<string, EditOverride> = {};
    for (const edit of edits) overrides[edit.uuid] = { active: edit.active, start_ms: edit.start_ms, end_ms: edit.end_ms };
    setError(null);
    try {
      const draft = await post<Draft>(`/api/v1/projects/${projectId}/drafts/`, { name: String(form.get('name') ?? 'Draft'), edit_overrides: overrides, export_settings: {} });
      setNote(`Saved “${draft.name}”.`);
      await load();
    } catch (caught) {
      setError(caught);
    }
  };
  const open = async (draft: Draft) => {
    setError(null);
    try {
      const full = await get<Draft>(`/api/v1/drafts/${draft.uuid}`);
      const known = new Set(edits.map((edit) => edit.uuid));
      await Promise.all(Object.entries(full.edit_overrides).filter(([uuid]) => known.has(uuid)).map(([uuid, override]) => patch(`/api/v1/edits/${uuid}`, override)));
      setNote(`Opened “${draft.name}”.`);
      onOpened();
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <section aria-labelledby="drafts-title">
      <h2 id="drafts-title">Drafts</h2>
      <form class="inline" onSubmit={(event) => void save(event)}>
        <label class="field">
          <span>Draft name</span>
          <input name="name" required maxLength={200} defaultValue="My cut" />
        </label>
        <button type="submit">Save draft</button>
      </form>
      {note && <p role="status" class="ok">{note}</p>}
      <ErrorNote error={error} />
      <ul class="drafts">
        {drafts.map((draft) => (
          <li key={draft.uuid}>
            {draft.name}{' '}
            <button class="secondary" onClick={() => void open(draft)}>
              Open
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

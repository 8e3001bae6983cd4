// The creator's projects, newest first, and a new one.
import { useEffect, useState } from 'preact/hooks';
import { allPages, post, type Project } from './api.ts';
import type { Session } from './main.tsx';
import { linkProps, navigate } from './router.ts';
import { ErrorNote, Field } from './ui.tsx';

export function Projects({ session }: { session: Session }) {
  const [projects, setProjects] = useState<Project[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    allPages<Project>('/api/v1/projects/').then(setProjects, setError);
  }, []);
  const create = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setError(null);
    try {
      const project = await post<Project>('/api/v1/projects/', { name: String(form.get('name') ?? '') });
      session.refreshBilling();
      navigate(`/projects/${project.uuid}`);
    } catch (caught) {
      setError(caught);
    }
  };
  const { billing } = session;
  return (
    <main>
      <h1>Projects</h1>
      <form class="inline" onSubmit={(event) => void create(event)}>
        <Field label="New project">
          <input name="name" required maxLength={200} placeholder="My talk" />
        </Field>
        <button type="submit">Create</button>
        <span class="muted">
          {billing.project_count} of {billing.max_projects < 0 || billing.max_projects > 1e6 ? 'unlimited' : billing.max_projects} projects on {billing.tier}
        </span>
      </form>
      <ErrorNote error={error} />
      {projects === null ? (
        <p role="status">Loading…</p>
      ) : projects.length === 0 ? (
        <p>No project yet: create one, then upload a recording.</p>
      ) : (
        <ul class="projects">
          {projects.map((project) => (
            <li key={project.uuid}>
              <a {...linkProps(`/projects/${project.uuid}`)}>{project.name}</a> <span class={`status ${project.status}`}>{project.status}</span>
            </li>
          ))}
        </ul>
      )}
    </main>
  );
}

import { readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { expect } from 'chai';

/** No container engine runs here, so the image is checked against the code it must hold. */

const root = new URL('../../', import.meta.url).pathname;
const entry = 'job-images/ffmpeg/src/main.ts';

/** Runtime imports of a module: static (not `import type`) and dynamic. */
function runtimeImports(source: string): string[] {
  const specifiers: string[] = [];
  for (const match of source.matchAll(/^(?:import|export)\s+(type\s+)?[^;]*?\sfrom\s+'([^']+)'/gms)) {
    if (!match[1] && match[2]) specifiers.push(match[2]);
  }
  for (const match of source.matchAll(/import\('([^']+)'\)/g)) if (match[1]) specifiers.push(match[1]);
  return specifiers;
}

/** Every repository file and every package main.ts loads at run time. */
async function importGraph(): Promise<{ files: string[]; packages: Set<string> }> {
  const files = new Set<string>();
  const packages = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    for (const specifier of runtimeImports(await readFile(join(root, file), 'utf8'))) {
      if (specifier.startsWith('.')) pending.push(relative(root, join(root, dirname(file), specifier)));
      else if (!specifier.startsWith('node:')) packages.add(specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/'));
    }
  }
  return { files: [...files], packages };
}

describe('the ffmpeg job image (job-images/ffmpeg/Dockerfile)', () => {
  let dockerfile: string;
  before(async () => {
    dockerfile = await readFile(join(root, 'job-images/ffmpeg/Dockerfile'), 'utf8');
  });

  it('copies every repository file the entrypoint loads', async () => {
    const copied = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((match) => match[1]!.split(/\s+/));
    const { files } = await importGraph();
    const missing = files.filter((file) => !copied.some((source) => file === source || file.startsWith(`${source.replace(/\/$/, '')}/`)));
    expect(missing).to.deep.equal([]);
  });

  it('every package the entrypoint loads is a production dependency (the image omits dev dependencies)', async () => {
    const { dependencies } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const { packages } = await importGraph();
    expect([...packages].filter((name) => !(name in dependencies))).to.deep.equal([]);
  });

  it('runs main.ts as a non-root user from a digest-pinned Node 24 base with Debian ffmpeg', () => {
    expect(dockerfile).to.match(/^ARG NODE_IMAGE=node:24-bookworm-slim@sha256:[0-9a-f]{64}$/m);
    expect(dockerfile).to.match(/apt-get install -y --no-install-recommends ffmpeg/);
    expect(dockerfile).to.match(/^USER node$/m);
    expect(dockerfile).to.match(/^CMD \["node", "job-images\/ffmpeg\/src\/main\.ts"\]$/m);
  });

  it('ships the fonts the render burns captions and the watermark in, where the render looks for them', () => {
    expect(dockerfile).to.match(/apt-get install -y --no-install-recommends ffmpeg fonts-dejavu-core/);
    expect(dockerfile).to.match(/CUTROOM_FONTS_DIR=\/usr\/share\/fonts\/truetype\/dejavu/);
  });
});

import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { JobFailure } from '../../../lib/job-failure.ts';
import type { JobContext, JobProgram } from '../../../lib/job-program.ts';
import type { JobSpec } from '../../../lib/job-spec.ts';
import type { StepOf } from '../../../../crds/contract/programs.ts';
import { stepFraction } from '../../../lib/progress.ts';
import { PROXY_FILES, proxyInputSchema, type ProxyInput, type ProxyResult } from '../../../../crds/contract/programs/proxy.ts';
import { probeSource, withDuration } from '../media/probe.ts';
import { MediaToolError, mediaToolsFromEnv, runFfmpeg } from '../media/tools.ts';
import { planProxy, proxyPassArgs } from './proxy-args.ts';
import type { ProxyFiles } from './proxy-args.ts';

const exists = (path: string): Promise<boolean> => access(path).then(() => true, () => false);

async function run(spec: JobSpec<ProxyInput>, ctx: JobContext<StepOf<'proxy'>>): Promise<ProxyResult> {
  const { sourceKey: key } = spec.input;
  const tools = mediaToolsFromEnv(ctx.env);
  const files: ProxyFiles = {
    source: join(ctx.workDir, 'source'),
    proxy: join(ctx.workDir, PROXY_FILES.proxy.name),
    sprite: join(ctx.workDir, PROXY_FILES.sprite.name),
  };

  ctx.progress.report('download', 0);
  await ctx.storage.download(key, files.source, { signal: ctx.signal, onProgress: stepFraction(ctx.progress, 'download') });

  ctx.progress.report('probe', 0);
  const media = await withDuration(tools, await probeSource(tools, files.source, key, ctx.signal), files.source, key, ctx.signal);
  if (media.kind !== 'video') throw new JobFailure(`The media file "${key}" is not a video: it has no proxy`, { code: 'media.not_video' });
  const plan = planProxy(media);

  ctx.progress.report('process', 0);
  const reportProcess = stepFraction(ctx.progress, 'process');
  try {
    await runFfmpeg(tools, proxyPassArgs(media, plan, files), {
      signal: ctx.signal,
      onProgress: (seconds) => {
        if (media.durationSeconds) reportProcess(seconds / media.durationSeconds);
      },
    });
  } catch (error) {
    if (!(error instanceof MediaToolError)) throw error;
    const reason = (error.stderrTail.at(-1) ?? 'no message').replace(`${files.source}: `, '');
    throw new JobFailure(`The proxy of "${key}" could not be made (${reason})`, { cause: error, code: 'proxy.failed' });
  }
  for (const output of ['proxy', 'sprite'] as const) {
    if (!(await exists(files[output]))) throw new JobFailure(`The proxy of "${key}" could not be made: ffmpeg produced no ${PROXY_FILES[output].name}`, { code: 'proxy.failed' });
  }

  ctx.progress.report('upload', 0);
  const reportUpload = stepFraction(ctx.progress, 'upload');
  let uploaded = 0;
  await Promise.all(
    (['proxy', 'sprite'] as const).map((output) =>
      ctx.storage
        .uploadFile(ctx.outputKey(PROXY_FILES[output].name), files[output], PROXY_FILES[output].contentType, ctx.signal)
        .then(() => reportUpload(++uploaded / 2)),
    ),
  );
  return { proxy_key: ctx.outputKey(PROXY_FILES.proxy.name), sprite_key: ctx.outputKey(PROXY_FILES.sprite.name), sprite: plan.sprite };
}

/** `program: "proxy"`: the 480p H.264 proxy and the scrub sprite of a video browsers cannot play as uploaded. */
export const proxyProgram: JobProgram<'proxy'> = {
  name: 'proxy',
  run,
};

import { defineEntity, p } from '@mikro-orm/core';
import { AnalysisRun } from '../analysis/entities.ts';
import { Project } from '../projects/entities.ts';

/**
 * One caption line of an analysis run (timeline ms): generated from the run's transcript
 * words, so activating another run shows that run's lines. `text` is the user's to edit;
 * `original_text` keeps what generation wrote. Lines go with their run and their project.
 */
export const CaptionLine = defineEntity({
  name: 'CaptionLine',
  tableName: 'caption_lines',
  properties: {
    id: p.uuid().primary(),
    project: () => p.manyToOne(Project).deleteRule('cascade').index(),
    run: () => p.manyToOne(AnalysisRun).deleteRule('cascade'),
    sequence: p.integer(),
    startMs: p.integer(),
    endMs: p.integer(),
    text: p.text(),
    originalText: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
  uniques: [{ properties: ['run', 'sequence'] }],
});

export type CaptionLineRow = InstanceType<typeof CaptionLine.class>;

// The transcript with every suggested cut in place: its words struck through while the cut is
// active (dotted while it is only offered), a chip with its reason and confidence where it
// starts. Rows are virtualized (@tanstack/virtual-core): a 60-minute talk's 10,000 words keep
// a few dozen rows in the page.
import { useEffect, useLayoutEffect, useMemo, useReducer, useRef, useState } from 'preact/hooks';
import { elementScroll, observeElementOffset, observeElementRect, Virtualizer } from '@tanstack/virtual-core';
import { isSuggestion, type Edit, type TranscriptWord } from './api.ts';

const WORDS_PER_ROW = 14;
const ROW_ESTIMATE_PX = 30;

type Token = { kind: 'word'; word: TranscriptWord; cut: Edit | null } | { kind: 'cut'; edit: Edit };

/** The cut a word falls in (by its middle), if any. */
function cutOf(word: TranscriptWord, cuts: Edit[]): Edit | null {
  const middle = (word.start_ms + word.end_ms) / 2;
  return cuts.find((edit) => middle >= edit.start_ms && middle < edit.end_ms) ?? null;
}

/** Words and cut chips in time order, cut into rows. */
export function transcriptRows(words: TranscriptWord[], edits: Edit[]): Token[][] {
  const cuts = edits.filter(isSuggestion).sort((a, b) => a.start_ms - b.start_ms);
  const tokens: Token[] = [];
  let next = 0;
  for (const word of words) {
    while (next < cuts.length && cuts[next]!.start_ms <= word.start_ms) tokens.push({ kind: 'cut', edit: cuts[next++]! });
    tokens.push({ kind: 'word', word, cut: cutOf(word, cuts) });
  }
  while (next < cuts.length) tokens.push({ kind: 'cut', edit: cuts[next++]! });
  const rows: Token[][] = [];
  let row: Token[] = [];
  let count = 0;
  for (const token of tokens) {
    row.push(token);
    if (token.kind === 'word' && ++count === WORDS_PER_ROW) {
      rows.push(row);
      row = [];
      count = 0;
    }
  }
  if (row.length) rows.push(row);
  return rows;
}

export function Transcript({ words, edits, selected, onSelect }: { words: TranscriptWord[]; edits: Edit[]; selected: string | null; onSelect: (uuid: string) => void }) {
  const rows = useMemo(() => transcriptRows(words, edits), [words, edits]);
  const scroller = useRef<HTMLDivElement>(null);
  const [, rerender] = useReducer((tick: number) => tick + 1, 0);
  const [virtualizer] = useState(
    () =>
      new Virtualizer<HTMLDivElement, HTMLDivElement>({
        count: rows.length,
        getScrollElement: () => scroller.current,
        estimateSize: () => ROW_ESTIMATE_PX,
        scrollToFn: elementScroll,
        observeElementRect,
        observeElementOffset,
        overscan: 8,
        onChange: () => rerender(0),
      }),
  );
  virtualizer.setOptions({ ...virtualizer.options, count: rows.length });
  useEffect(() => virtualizer._didMount(), [virtualizer]);
  useLayoutEffect(() => virtualizer._willUpdate());

  // the selected cut's row comes into view
  useEffect(() => {
    if (!selected) return;
    const index = rows.findIndex((row) => row.some((token) => token.kind === 'cut' && token.edit.uuid === selected));
    if (index >= 0) virtualizer.scrollToIndex(index, { align: 'center' });
  }, [selected]);

  return (
    <div class="transcript-box">
      <h3 id="transcript-title">Transcript</h3>
      <div ref={scroller} class="transcript" role="region" aria-labelledby="transcript-title" tabIndex={0} data-words={words.length}>
        <div style={{ height: `${virtualizer.getTotalSize()}px`, position: 'relative' }}>
          {virtualizer.getVirtualItems().map((item) => (
            <div key={item.key} data-index={item.index} ref={(node) => virtualizer.measureElement(node)} class="line" style={{ transform: `translateY(${item.start}px)` }}>
              {rows[item.index]!.map((token) =>
                token.kind === 'cut' ? (
                  <button key={`c${token.edit.uuid}`} class={`chip${token.edit.active ? ' active' : ''}${token.edit.uuid === selected ? ' selected' : ''}`} onClick={() => onSelect(token.edit.uuid)} title={token.edit.reason}>
                    ✂ {token.edit.reason}
                    {token.edit.confidence !== null && ` · ${Math.round(token.edit.confidence * 100)}%`}
                  </button>
                ) : (
                  <span key={`w${token.word.start_ms}`} class={token.cut ? (token.cut.active ? 'cut' : 'offered') : undefined}>
                    {token.cut?.active ? <s>{token.word.word.trim()}</s> : token.word.word.trim()}{' '}
                  </span>
                ),
              )}
            </div>
          ))}
        </div>
      </div>
    </div>
  );
}

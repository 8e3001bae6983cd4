import { expect } from 'chai';
import { withCorrections, type CorrectedLine } from '../../api/src/captions/corrections.ts';

/** Issue 22 item 3: caption text the user corrected follows a re-analysis where the words still match. */
describe('caption corrections carry over to a new run\'s lines where the words still match', () => {
  const corrected: CorrectedLine[] = [{ text: 'Welcome to THE show!', original_text: 'welcome to the show', start_ms: 0, end_ms: 1200 }];

  it('a line of the same words at an overlapping time takes the corrected text; original stays what was planned', () => {
    const [line] = withCorrections([{ text: 'Welcome to the show.', start_ms: 20, end_ms: 1180 }], corrected);
    expect(line).to.deep.equal({ text: 'Welcome to THE show!', original: 'Welcome to the show.', start_ms: 20, end_ms: 1180 });
  });

  it('other words (the recognizer heard differently) or another time keep the new text', () => {
    const lines = withCorrections(
      [
        { text: 'welcome to this show', start_ms: 0, end_ms: 1200 },
        { text: 'welcome to the show', start_ms: 5000, end_ms: 6000 },
        { text: 'welcome to the', start_ms: 0, end_ms: 900 },
      ],
      corrected,
    );
    expect(lines.map((line) => line.text)).to.deep.equal(['welcome to this show', 'welcome to the show', 'welcome to the']);
  });

  it('the newest correction of the same words wins', () => {
    const [line] = withCorrections([{ text: 'welcome to the show', start_ms: 0, end_ms: 1200 }], [{ ...corrected[0]!, text: 'Newest' }, corrected[0]!]);
    expect(line!.text).to.equal('Newest');
  });
});

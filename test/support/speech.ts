// Speech with known truth lives with the other generated media in hack/fixtures, which the
// benchmarks use too.
export { makeSpokenTrack, makeSpokenVideo, wordErrorRate, type SpokenPart, type SpokenTrack, type TimedPhrase, type TimeSpan } from '../../hack/fixtures/speech.ts';

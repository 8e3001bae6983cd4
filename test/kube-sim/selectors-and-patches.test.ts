import { expect } from 'chai';
import { applyJsonPatch, applyMergePatch } from './patches.ts';
import { parseFieldSelector, parseLabelSelector } from './selectors.ts';
import { StatusError } from './status-error.ts';

describe('kube-sim: label and field selectors', () => {
  const labels = { app: 'cutroom', tier: 'pro', 'cutroom.dev/kind': 'render' };

  it('equality (= and ==), inequality, in, notin, existence and absence, comma meaning AND', () => {
    const cases: [string, boolean][] = [
      ['', true],
      ['app=cutroom', true],
      ['app==cutroom', true],
      ['app!=cutroom', false],
      ['missing!=x', true],
      ['tier in (free, pro)', true],
      ['tier notin (free,pro)', false],
      ['missing notin (x)', true],
      ['cutroom.dev/kind', true],
      ['!tier', false],
      ['!missing', true],
      ['app=cutroom,tier in (pro),!missing', true],
      ['app=cutroom,tier=free', false],
    ];
    for (const [selector, expected] of cases) expect(parseLabelSelector(selector)(labels), selector).to.equal(expected);
  });

  it('a malformed label selector → 400 BadRequest', () => {
    expect(() => parseLabelSelector('app=(x')).to.throw(StatusError).with.property('code', 400);
  });

  it('field selectors compare dotted paths with = and !=', () => {
    const pod = { metadata: { name: 'p', namespace: 'n' }, status: { phase: 'Running' } };
    expect(parseFieldSelector('metadata.name=p,status.phase!=Failed')(pod)).to.equal(true);
    expect(parseFieldSelector('status.phase=Succeeded')(pod)).to.equal(false);
  });
});

describe('kube-sim: merge patch (RFC 7386) and JSON patch (RFC 6902)', () => {
  it('merge patch merges objects, replaces arrays, and null deletes', () => {
    const target = { a: { b: 1, c: 2 }, list: [1, 2], keep: true };
    expect(applyMergePatch(target, { a: { b: null, d: 3 }, list: [3] })).to.deep.equal({ a: { c: 2, d: 3 }, list: [3], keep: true });
    expect(target.a).to.deep.equal({ b: 1, c: 2 });
  });

  it('JSON patch supports add, remove, replace, move, copy and test, with ~1 and ~0 escapes', () => {
    const target = { metadata: { labels: { 'a/b': 'x' } }, list: [1, 3] };
    const result = applyJsonPatch(target, [
      { op: 'add', path: '/list/1', value: 2 },
      { op: 'add', path: '/list/-', value: 4 },
      { op: 'replace', path: '/metadata/labels/a~1b', value: 'y' },
      { op: 'copy', from: '/list/0', path: '/first' },
      { op: 'move', from: '/first', path: '/moved' },
      { op: 'test', path: '/moved', value: 1 },
      { op: 'remove', path: '/list/0' },
    ]);
    expect(result).to.deep.equal({ metadata: { labels: { 'a/b': 'y' } }, list: [2, 3, 4], moved: 1 });
    expect(target.list).to.deep.equal([1, 3]);
  });

  it('a JSON patch on a missing path or a failed test → 422; a non-array body → 400', () => {
    expect(() => applyJsonPatch({}, [{ op: 'remove', path: '/nope' }])).to.throw(StatusError).with.property('code', 422);
    expect(() => applyJsonPatch({ a: 1 }, [{ op: 'test', path: '/a', value: 2 }])).to.throw(StatusError).with.property('code', 422);
    expect(() => applyJsonPatch({}, { op: 'add' })).to.throw(StatusError).with.property('code', 400);
  });
});

/** A plan that cannot be made (e.g. a segment names a source that was not given); every stage throws it. */
export class RenderPlanError extends Error {
  override name = 'RenderPlanError';
}

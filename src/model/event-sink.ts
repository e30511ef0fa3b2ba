/**
 * The one channel from a flow to its view. A flow makes its view first and hands the view itself
 * to everything that has something to tell during the run (the client at Connect, the engine it
 * runs), so that planning and applying report the same way: as events of one typed union, which
 * the view alone decides how to show.
 */
export interface EventSink<E> {
  event(event: E): void;
}

import { useRef } from 'preact/hooks';

/** The value of the latest render, for callbacks kept by a long-lived effect (a stream, a timer). */
export function useLatest<T>(value: T): { readonly current: T } {
  const ref = useRef(value);
  ref.current = value;
  return ref;
}

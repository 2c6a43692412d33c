import type { ComponentChildren } from 'preact';

/** A checkbox inside its label, the label's text after it. */
export function LabelledCheck(props: {
  checked: boolean;
  onChecked: (checked: boolean) => void;
  children: ComponentChildren;
}) {
  return (
    <label class="check">
      <input type="checkbox" checked={props.checked} onChange={(e) => props.onChecked(e.currentTarget.checked)} />{' '}
      {props.children}
    </label>
  );
}

import type { InputHTMLAttributes } from 'preact';

/**
 * An input with its label before it: a form's number, time or text field, its value as typed. `attributes`
 * are the input's own (type, min, max, step, placeholder).
 */
export function LabelledInput(props: {
  id: string;
  label: string;
  value: string;
  onValue: (value: string) => void;
  attributes?: InputHTMLAttributes;
}) {
  const { id, label, value, onValue, attributes } = props;
  return (
    <>
      <label for={id}>{label}</label>
      <input {...attributes} id={id} value={value} onInput={(e) => onValue(e.currentTarget.value)} />
    </>
  );
}

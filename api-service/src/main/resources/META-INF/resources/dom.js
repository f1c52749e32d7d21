// Small DOM helpers shared by the job page (app.js) and the operator console (console.js).

/** Creates an element; attributes starting with "data-" become data attributes. Text stays text. */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') node.className = value;
    else if (name === 'text') node.textContent = value;
    else if (name in node && !name.startsWith('data-') && !name.startsWith('aria-')) node[name] = value;
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child !== null && child !== undefined && child !== false) node.append(child);
  }
  return node;
}

export function time(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleString();
}

export function timeElement(iso) {
  return h('time', { datetime: iso || '', title: iso || '', text: time(iso) });
}

// Amounts of money come from the API as JSON numbers of US dollars with at most 6 decimals
// (numeric(18,6) in the database): cents always, and as many further decimals as the amount has,
// so a cost of a few hundred tokens (0.000636) does not show as $0.00.
const USD = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  minimumFractionDigits: 2,
  maximumFractionDigits: 6,
});

/** "$0.000636", "$250.00"; an empty string for null or undefined. */
export function usd(amount) {
  if (amount === null || amount === undefined || amount === '') return '';
  const n = Number(amount);
  return Number.isFinite(n) ? USD.format(n) : String(amount);
}

/** Whole millionths of a dollar, so that sums of amounts stay exact (0.1 + 0.2 is not 0.3). */
export function micros(amount) {
  return Math.round(Number(amount) * 1e6);
}

/** Millionths of a dollar back to a plain decimal string with no trailing zeros: "0.000636". */
export function fromMicros(n) {
  return (n / 1e6).toFixed(6).replace(/\.?0+$/, '');
}

const COUNT = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });

/** A count in few characters: 41, 9.2k, 100k (tokens per minute and the like). */
export function count(n) {
  return COUNT.format(Number(n)).toLowerCase();
}

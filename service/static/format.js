/* Text for times and numbers: relative and absolute dates, durations, counts, first lines. */

import { el } from './dom.js';

export function relTime(epoch) {
  const seconds = Math.round((Date.now() - epoch) / 1000);
  if (seconds < 45) return 'just now';
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.round(hours / 24);
  if (days < 7) return `${days} d ago`;
  return new Date(epoch).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
}

export function absTime(value) {
  const date = typeof value === 'number' ? new Date(value) : new Date(String(value));
  return Number.isNaN(date.getTime()) ? String(value || '') : date.toLocaleString();
}

export function timeEl(epoch, cls) {
  return el('time', {
    class: cls, datetime: new Date(epoch).toISOString(), title: absTime(epoch),
    dataset: { epoch: String(epoch) }, text: relTime(epoch),
  });
}

export function duration(seconds) {
  const minutes = Math.floor(seconds / 60);
  if (minutes < 1) return 'under a minute';
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return hours < 48 ? `${hours} h ${minutes % 60} min` : `${Math.floor(hours / 24)} days`;
}

export const fmt = (n) => (typeof n === 'number' ? n.toLocaleString() : String(n ?? '—'));

export function firstLine(text, limit = 160) {
  const line = String(text || '').split('\n').map((s) => s.trim()).find(Boolean) || '';
  return line.length > limit ? line.slice(0, limit - 1).trimEnd() + '…' : line;
}

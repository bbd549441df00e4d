/* API: the one place that calls the service (`api()`), builds query strings and names the
 * list routes and search result groups the feed reads.
 *
 * A refusal becomes an ApiError carrying the service's message and JSON body, so forms can show
 * the reason next to the field it names.
 */

export const LIST_PATH = { observation: '/api/observations', summary: '/api/summaries', prompt: '/api/prompts' };
export const SEARCH_TYPE = { observation: 'observations', summary: 'sessions', prompt: 'prompts' };

class ApiError extends Error {
  constructor(message, status, data) {
    super(message);
    this.status = status;
    this.data = data;
  }
}

export async function api(path, { method = 'GET', body } = {}) {
  const init = { method, headers: { Accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (_) {
    throw new ApiError('the service is not answering; is it running?', 0, null);
  }
  const text = await response.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch (_) { data = text; }
  }
  if (!response.ok) {
    const message = (data && typeof data === 'object' && data.message) || `${response.status} ${response.statusText}`;
    throw new ApiError(message, response.status, data);
  }
  return data;
}

export function qs(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === '' || value === null || value === undefined) continue;
    search.set(key, String(value));
  }
  return search.toString();
}

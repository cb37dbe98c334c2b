/**
 * `GET /`: where to go from the service's root — the API reference and the dashboard. JSON for a
 * client that asks for JSON (and not for HTML), otherwise a tiny HTML page.
 */
import type { FastifyInstance } from 'fastify';

export function rootLinks(publicUrl: string, apiPrefix: string): Record<string, string> {
  return {
    docs: `${publicUrl}/docs`,
    openapi: `${publicUrl}/openapi.json`,
    dashboard: `${publicUrl}/dashboard`,
    api: `${publicUrl}${apiPrefix}`,
  };
}

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function rootPage(links: Record<string, string>): string {
  const link = (href: string, text: string) => `<li><a href="${escapeHtml(href)}">${text}</a></li>`;
  return [
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Payments service</title></head><body>',
    '<h1>Payments service</h1><ul>',
    link(links.docs!, 'API reference (/docs)'),
    link(links.dashboard!, 'Dashboard (/dashboard)'),
    link(links.openapi!, 'OpenAPI document (/openapi.json)'),
    '</ul></body></html>',
  ].join('');
}

const wantsJson = (accept: string | undefined): boolean => /\bapplication\/json\b/i.test(accept ?? '') && !/\btext\/html\b/i.test(accept ?? '');

export function registerRootPage(app: FastifyInstance, publicUrl: string, apiPrefix: string): void {
  const links = rootLinks(publicUrl, apiPrefix);
  const html = rootPage(links);
  app.get('/', { schema: { hide: true } }, async (request, reply) => {
    reply.header('vary', 'Accept');
    if (wantsJson(request.headers.accept)) return links;
    return reply.type('text/html; charset=utf-8').send(html);
  });
}

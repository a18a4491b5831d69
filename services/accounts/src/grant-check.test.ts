import { describe, expect, it } from 'vitest';
import { grantProblem, requestedScopes, scopesFor } from './grant-check.ts';

const PAGE_SCOPES = requestedScopes('page_network');

describe('requestedScopes', () => {
  // Guarantee: connecting Pages asks for the Page and the linked Instagram permissions; Instagram alone asks for its own.
  it('asks for what each network needs', () => {
    expect(PAGE_SCOPES).toEqual(expect.arrayContaining(['pages_manage_posts', 'instagram_content_publish']));
    const photo = requestedScopes('photo_network');
    expect(photo).toContain('instagram_manage_messages');
    expect(photo).not.toContain('pages_manage_posts');
  });
});

describe('scopesFor', () => {
  // Guarantee: a permission the user limited to other Pages or accounts does not count for this one.
  it('honours granular targets', () => {
    const grant = {
      scopes: ['pages_show_list', 'instagram_basic', 'business_management'],
      granular: [
        { scope: 'pages_show_list', target_ids: ['page-1'] },
        { scope: 'instagram_basic', target_ids: ['ig-2'] },
      ],
    };
    expect(scopesFor(grant, 'ig-1', 'page-1')).toEqual(['pages_show_list', 'business_management']);
    expect(scopesFor(grant, 'ig-2', 'page-9')).toEqual(['instagram_basic', 'business_management']);
  });
});

describe('grantProblem', () => {
  // Guarantee: a complete grant and a role that allows everything raise no problem.
  it('accepts a full grant', () => {
    expect(grantProblem('page_network', 'Acme', PAGE_SCOPES, ['MANAGE'])).toBeNull();
  });

  // Guarantee: each missing permission is named with what it is for, and the fix is said.
  it('names missing permissions and the fix', () => {
    const problem = grantProblem('photo_network', '@acme', ['instagram_basic', 'pages_show_list']);
    expect(problem).toContain('instagram_content_publish (to publish posts)');
    expect(problem).toContain('instagram_manage_messages (to read and answer messages)');
    expect(problem).toContain('Connect again');
  });

  // Guarantee: a Page role without content creation or messaging is reported, even with every scope.
  it('names a Page role that cannot publish or message', () => {
    const problem = grantProblem('page_network', 'Acme', PAGE_SCOPES, ['ANALYZE']);
    expect(problem).toContain('does not allow publishing');
    expect(problem).toContain('does not allow messaging');
  });
});

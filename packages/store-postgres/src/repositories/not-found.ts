import { StoreError } from '@veetbot/domain';

export function notFound(what: string): StoreError {
  return new StoreError('store.not_found', `${what} does not exist for this tenant.`);
}

/**
 * `Promise.withResolvers` (ES2024) for Node 20, which lacks it: `@restatedev/restate-sdk` calls
 * it and must find it before the SDK is imported, so the Restate service child imports this module
 * first (docs/adr/0073). Defined only when missing; Node 22 has its own.
 */
interface Resolvers<T> {
  promise: Promise<T>;
  resolve: (value: T | PromiseLike<T>) => void;
  reject: (reason?: unknown) => void;
}

declare global {
  interface PromiseConstructor {
    /** Present once this module ran (ES2024; defined here on Node 20). */
    withResolvers<T>(): Resolvers<T>;
  }
}

// The type above says it exists; on Node 20 it does not until this runs.
if (typeof (Promise as { withResolvers?: unknown }).withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers<T>(): Resolvers<T> {
      let resolve!: Resolvers<T>['resolve'];
      let reject!: Resolvers<T>['reject'];
      const promise = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}

export {};

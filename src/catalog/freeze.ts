/** @module Deep freeze: a compiled plan cannot be changed after it is built. */

export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== "object" || Object.isFrozen(value) || value instanceof RegExp)
    return value;
  if (value instanceof Map) {
    for (const [k, v] of value) {
      deepFreeze(k);
      deepFreeze(v);
    }
    freezeMap(value);
  } else {
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return Object.freeze(value);
}

function freezeMap(map: Map<unknown, unknown>): void {
  const refuse = () => {
    throw new TypeError("a compiled map cannot be changed");
  };
  Object.defineProperties(map, {
    set: { value: refuse },
    delete: { value: refuse },
    clear: { value: refuse },
  });
}

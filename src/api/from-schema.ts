/**
 * The TypeScript type a JSON Schema declares, for the part of JSON Schema src/api writes its shapes
 * in (type, enum, const, anyOf, properties with required, additionalProperties, items), so each
 * shape is written once, as the schema ajv checks, and its type follows. A schema must be declared
 * `as const` for its literals to reach the type. Anything else (a schema with only a description)
 * is `unknown`, as any JSON is.
 */
export type FromSchema<S> = S extends { anyOf: readonly (infer Member)[] }
  ? FromSchema<Member>
  : S extends { enum: readonly (infer Value)[] }
    ? Value
    : S extends { const: infer Value }
      ? Value
      : S extends { type: readonly (infer Name)[] }
        ? OfType<Name>
        : S extends { type: 'object' }
          ? ObjectOf<S>
          : S extends { type: 'array'; items: infer Item }
            ? FromSchema<Item>[]
            : S extends { type: 'string' }
              ? string
              : S extends { type: 'integer' | 'number' }
                ? number
                : S extends { type: 'boolean' }
                  ? boolean
                  : S extends { type: 'null' }
                    ? null
                    : unknown;

/** `type: [a, b]`: either. */
type OfType<Name> = Name extends unknown ? FromSchema<{ type: Name }> : never;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

type RequiredOf<S> = S extends { required: readonly (infer Name)[] } ? Name : never;

/** An object's declared properties (optional unless required), and the values of any others. */
type ObjectOf<S> = Simplify<
  (S extends { properties: infer Properties }
    ? { -readonly [K in keyof Properties & RequiredOf<S>]: FromSchema<Properties[K]> } & {
        -readonly [K in Exclude<keyof Properties, RequiredOf<S>>]?: FromSchema<Properties[K]>;
      }
    : unknown) &
    (S extends { additionalProperties: false }
      ? unknown
      : S extends { additionalProperties: infer Other }
        ? Record<string, FromSchema<Other>>
        : S extends { properties: object }
          ? unknown
          : Record<string, unknown>)
>;

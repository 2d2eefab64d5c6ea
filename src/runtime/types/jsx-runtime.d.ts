// agent-bundle's JSX runtime (`jsxImportSource: "agent-bundle"`): event routes render plain
// elements, no React.

/** An element: a component and its props. */
export interface AgentElement {
  readonly $$typeof: symbol;
  readonly type: unknown;
  readonly props: { readonly [key: string]: unknown };
}

/**
 * What a component may render: elements, or nothing. Text (strings, numbers) is rendered
 * inside `Agent.Context` only: anywhere else it fails the render.
 */
export type AgentNode = AgentElement | string | number | bigint | boolean | null | undefined | readonly AgentNode[];

export declare namespace JSX {
  type Element = AgentElement;
  /** A tag names a component (async ones too), never an HTML element. */
  type ElementType = (props: any) => AgentNode | Promise<AgentNode>;
  interface IntrinsicElements {}
  /** `key` is taken by any element, and ignored (nothing is reconciled). */
  interface IntrinsicAttributes {
    readonly key?: string | number | bigint | null;
  }
  interface ElementChildrenAttribute {
    children: {};
  }
}

/** `<>…</>`, or `<Fragment key={…}>`: its children render in place. A marker: never call it. */
export declare function Fragment(props: { readonly children?: AgentNode }): AgentElement;
export declare function jsx(type: unknown, props: unknown, key?: unknown): AgentElement;
export declare function jsxs(type: unknown, props: unknown, key?: unknown): AgentElement;
/** The classic form of `jsx`, children after the props. */
export declare function createElement(type: unknown, props: unknown, ...children: unknown[]): AgentElement;

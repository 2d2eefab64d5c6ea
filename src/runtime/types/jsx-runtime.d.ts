// agent-bundle's JSX runtime (`jsxImportSource: "agent-bundle"`): event routes render plain
// elements, no React.

/** An element: a component and its props. */
export interface AgentElement {
  readonly $$typeof: symbol;
  readonly type: unknown;
  readonly props: { readonly [key: string]: unknown };
}

/** What a component may render: elements, text, or nothing. */
export type AgentNode = AgentElement | string | number | boolean | null | undefined | readonly AgentNode[];

export declare namespace JSX {
  type Element = AgentElement;
  /** A tag names a component (async ones too), never an HTML element. */
  type ElementType = (props: any) => AgentNode | Promise<AgentNode>;
  interface IntrinsicElements {}
  interface ElementChildrenAttribute {
    children: {};
  }
}

export declare const Fragment: unique symbol;
export declare function jsx(type: unknown, props: unknown, key?: unknown): AgentElement;
export declare function jsxs(type: unknown, props: unknown, key?: unknown): AgentElement;

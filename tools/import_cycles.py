"""Import cycles among dispatchtorch's modules: strongly connected components of grimp's graph.

`lint-imports` (import-linter) checks the layer contracts in pyproject.toml but reports a
broken contract, not the cycle behind it; this lists every cycle (module-level and
function-level imports alike, as grimp sees both), largest first.

    python -m tools.import_cycles [PACKAGE] [--ignore-tensor-lazy]

``--ignore-tensor-lazy`` drops the imports the layers contract allows on purpose (the
Tensor class's own method-level imports of the layers above it).
"""
import sys

import grimp

# the same exceptions as the layers contract's ignore_imports in pyproject.toml
TENSOR_LAZY = (
    "dispatchtorch.ops",
    "dispatchtorch._run",
    "dispatchtorch.autograd.engine",
    "dispatchtorch.serialization",
)


def _is_tensor_lazy(importer, imported):
    return importer == "dispatchtorch._tensor" and any(
        imported == p or imported.startswith(p + ".") for p in TENSOR_LAZY)


def cycles(package="dispatchtorch", ignore_tensor_lazy=False):
    """Strongly connected components with more than one module, largest first."""
    graph = grimp.build_graph(package, include_external_packages=False, cache_dir=None)
    modules = sorted(graph.modules)
    edges = {m: sorted(i for i in graph.find_modules_directly_imported_by(m)
                       if not (ignore_tensor_lazy and _is_tensor_lazy(m, i)))
             for m in modules}
    # Tarjan's algorithm, iterative (the graph is deep enough for recursion limits)
    index, low, on_stack, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in modules:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter[0]
                counter[0] += 1
                stack.append(node)
                on_stack.add(node)
            succ = edges.get(node, [])
            if i < len(succ):
                work.append((node, i + 1))
                nxt = succ[i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                comp = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    comp.append(m)
                    if m == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return sorted(out, key=lambda c: (-len(c), c))


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    found = cycles(args[0] if args else "dispatchtorch", "--ignore-tensor-lazy" in argv)
    for comp in found:
        print(f"{len(comp)} modules: " + " ".join(comp))
    print(f"{len(found)} cycle(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""torch.func: function transforms (grad, vjp, jvp, jacrev, jacfwd, hessian, vmap) and
functional_call. Built on the reverse-mode engine and a loop: `vmap` calls the function
once per batch entry and stacks the results (PyTorch batches the ops instead: the same
values, not its speed); there is no forward-mode AD, so jvp and jacfwd are computed in
reverse mode (the double-backward trick), with the same values."""
from ._batch_norm import replace_all_batch_norm_modules_
from ._functionalize import functionalize
from ._linearize import linearize
from ._module_state import functional_call, stack_module_state
from ._transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp
from ._vmap import vmap

__all__ = ["functional_call", "functionalize", "stack_module_state", "grad", "grad_and_value",
           "hessian", "jacfwd", "jacrev", "jvp", "linearize", "replace_all_batch_norm_modules_", "vjp", "vmap"]

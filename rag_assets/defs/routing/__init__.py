"""The `routing` group: routing data (subtrees, teacher actions), the trained routers, their
metrics, and R4's learned reorder policy; with the routers' training config."""

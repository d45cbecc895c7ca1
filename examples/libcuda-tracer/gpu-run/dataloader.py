# A PyTorch DataLoader with num_workers=4 (workers forked after CUDA was initialised in the
# parent; the workers touch no CUDA, as CUDA requires): batches built on the CPU by the workers,
# summed on the GPU by the parent. Prints the sum; must end (run under `timeout`).
import torch
from torch.utils.data import DataLoader, Dataset

class Squares(Dataset):
    def __len__(self):
        return 4096
    def __getitem__(self, i):
        return torch.full((256,), float(i * i % 1009))

x = torch.ones(1024, device="cuda")  # CUDA is initialised in the parent before the fork
loader = DataLoader(Squares(), batch_size=64, num_workers=4)
total = torch.zeros((), device="cuda", dtype=torch.float64)
for batch in loader:
    total += batch.to("cuda", dtype=torch.float64).sum()
torch.cuda.synchronize()
print(f"dataloader: {len(loader)} batches, sum {total.item():.1f}, x {x.sum().item():.1f}")

"""Diagnostic: toy checks with learned vs analytic (exact) networks."""
import json, math, sys, time
import numpy as np, torch
from explorables.core.checkpoint import Checkpointer
from explorables.jeffrey import diffusion as D, toy as Y
from explorables.jeffrey.experiment import *
from explorables.jeffrey.experiment import _toy_model, _log_w
from explorables.jeffrey.metrics import cell_frequencies, mmd2
from explorables.jeffrey.rule import *
torch.set_num_threads(1)
SIG = Y.MODE_STD
means, weights = Y._components(np.array(Y.TOY_JOINT))
MU = torch.tensor(means, dtype=torch.float64); PI = torch.tensor(weights/weights.sum(), dtype=torch.float64)
COMP_CELL = torch.tensor([s for s in range(4) for _ in range(2)])
def post(x, t, sch):
    a2 = sch.alpha_bars[t].double(); a = a2.sqrt(); b2 = 1 - a2
    v = a2*SIG**2 + b2
    x = x.double()
    d = x[:, None, :] - a*MU[None]
    logr = torch.log(PI)[None] - (d**2).sum(-1)/(2*v)
    r = torch.softmax(logr, -1)  # (n,8)
    return r, d, v, a, b2
class ExactEps(torch.nn.Module):
    def __init__(s, sch): super().__init__(); s.sch = sch
    def forward(s, x, tt):
        t = int(tt[0]); r, d, v, a, b2 = post(x, t, s.sch)
        score = -(r[..., None]*d).sum(1)/v
        return (-(b2.sqrt())*score).float()
class ExactClf(torch.nn.Module):
    """logits of c_t(s|x_t) for the data mixture; F: optional flip confusion applied (labels noisy)."""
    def __init__(s, sch, F=None): super().__init__(); s.sch = sch; s.F = None if F is None else torch.tensor(F)
    def forward(s, x, tt):
        t = int(tt[0]); r, d, v, a, b2 = post(x, t, s.sch)
        m = MU[None] + (a*SIG**2/v)*d  # posterior means (n,8,2)
        sd = math.sqrt(SIG**2*b2/v) if b2 > 0 else 1e-6
        sd = max(sd, 1e-6)
        N = torch.distributions.Normal(0., 1.)
        p1 = N.cdf(m[..., 0]/sd); p2 = N.cdf(m[..., 1]/sd)  # P(x1>0), P(x2>0)
        cells = torch.stack([(1-p1)*(1-p2), (1-p1)*p2, p1*(1-p2), p1*p2], -1)  # (n,8,4)
        c = (r[..., None]*cells).sum(1)
        if s.F is not None: c = c @ s.F
        return torch.log(c.clamp_min(1e-300)).float()

def main(base, inner=(0,1,2), n=800, exact_model=False):
    cfg = JeffreyConfig(seed=base, use_images=False)
    sch = D.NoiseSchedule.cosine(cfg.n_diffusion_steps)
    if exact_model:
        den = ExactEps(sch)
    else:
        torch.manual_seed(base)
        _, st = _toy_model(cfg, Checkpointer.null() if hasattr(Checkpointer,'null') else Checkpointer(None), False)
        den = toy_denoiser(cfg, st["denoiser"], torch.device("cpu"))
    F = flip_confusion(4, cfg.toy_label_noise)
    for seed in inner:
        run_seed, gen = seeded_generator(cfg, seed)
        data = Y.sample_toy(cfg.n_toy_train, gen)
        clf = train_toy_classifier(cfg, data, sch, gen, torch.device("cpu"))
        noise = lambda: torch.Generator().manual_seed(run_seed + 5000)
        ung = D.sample(den, sch, n, (2,), generator=noise())
        p = cell_frequencies(Y.toy_cells(ung), 4)
        q = supported_target(independent_target(p.reshape(2,2)).ravel(), p)
        exact = Y.sample_jeffrey_target(n, supported_target(q, Y.cell_marginal()), gen)
        log_w = _log_w(q, p, torch.device("cpu"))
        labels = torch.multinomial(torch.as_tensor(q), n, replacement=True, generator=gen)
        noisy = train_toy_classifier(cfg, data, sch, gen, torch.device("cpu"), flip_labels(Y.toy_cells(data), cfg.toy_label_noise, 4, gen))
        out = {"base": base, "seed": seed, "exact_model": exact_model, "p": p.round(3).tolist()}
        Mn = soft_confusion(noisy, ung, Y.toy_cells(ung), 4)
        # confusion along t (noisy classifier, forward-noised unguided samples): sharper than at t=0?
        diag = {}
        for t in (0, 5, 10, 20, 30, 40):
            g2 = torch.Generator().manual_seed(1)
            xt = sch._noise(ung, torch.full((n,), t), torch.randn(ung.shape, generator=g2))
            with torch.no_grad():
                pr = torch.softmax(noisy(xt, torch.full((n,), t)), -1).double()
                pe = torch.softmax(ExactClf(sch, F)(xt, torch.full((n,), t)), -1)
            diag[t] = [round(float(pr.max(1).values.mean()), 3), round(float(pe.max(1).values.mean()), 3)]
        out["noisy_maxprob_learned_vs_exact"] = diag
        for name, c_clean, c_noisy, Mn_ in (("learned", clf, noisy, Mn), ("exact", ExactClf(sch), ExactClf(sch, F), F)):
            res = {}
            for tag, cc, M in (("clean", c_clean, np.eye(4)), ("noisy", c_noisy, Mn_)):
                xj = D.sample(den, sch, n, (2,), generator=noise(), potential=jeffrey_potential(cc, log_w), scale=1.0)
                xc = D.sample(den, sch, n, (2,), generator=noise(), potential=classifier_potential(cc, labels), scale=1.0)
                jj = cell_frequencies(Y.toy_cells(xj), 4); jc = cell_frequencies(Y.toy_cells(xc), 4)
                pj = jeffrey_marginal_with(p, q, M); pc = classifier_guidance_marginal_with(p, q, M)
                res[tag] = dict(J_tvq=round(tv_distance(jj, q), 3), J_pred_tvq=round(tv_distance(pj, q), 3), J_tv_pred=round(tv_distance(jj, pj), 3),
                                C_tvq=round(tv_distance(jc, q), 3), C_pred_tvq=round(tv_distance(pc, q), 3), C_tv_pred=round(tv_distance(jc, pc), 3),
                                U_tv_predJ=round(tv_distance(p, pj), 3))
                if tag == "clean":
                    res[tag].update(J_mmd=round(mmd2(xj, exact), 4), C_mmd=round(mmd2(xc, exact), 4), U_mmd=round(mmd2(ung, exact), 4))
            out[name] = res
        print(json.dumps(out), flush=True)

if __name__ == "__main__":
    em = sys.argv[1] == "exact"
    for b in map(int, sys.argv[2:]):
        main(b, exact_model=em)

"""REINFORCE and actor-critic, from
https://github.com/pytorch/examples/tree/main/reinforcement_learning (reinforce.py and
actor_critic.py: Policy, select_action, finish_episode, the episode loop). BSD 3-Clause
License, Copyright (c) 2017, Pytorch contributors: see LICENSE-pytorch-examples.
Changes: a small deterministic stand-in for gymnasium's CartPole (CartLine below), a
few episodes, a hidden layer of 16; run_*() return each episode's reward and loss."""
from collections import deque, namedtuple

import numpy as np

import dispatchtorch as torch
import dispatchtorch.nn as nn
import dispatchtorch.nn.functional as F
import dispatchtorch.optim as optim
from dispatchtorch.distributions import Categorical

GAMMA = 0.99
eps = np.finfo(np.float32).eps.item()
SavedAction = namedtuple('SavedAction', ['log_prob', 'value'])


class CartLine:
    """gymnasium's reset/step interface over a 4-d state that each action pushes one
    way; an episode ends when the first coordinate leaves [-0.5, 0.5] or at 30 steps."""

    def reset(self, seed=None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.s = self.rng.uniform(-0.05, 0.05, 4)
        self.t = 0
        return self.s.copy(), {}

    def step(self, a):
        self.s = self.s + (0.1 if a else -0.1) * np.array([1, 0.5, -0.3, 0.2])
        self.t += 1
        return self.s.copy(), 1.0, bool(abs(self.s[0]) > 0.5), self.t >= 30, {}


class ReinforcePolicy(nn.Module):
    def __init__(self):
        super(ReinforcePolicy, self).__init__()
        self.affine1 = nn.Linear(4, 16)
        self.dropout = nn.Dropout(p=0.6)
        self.affine2 = nn.Linear(16, 2)

        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = self.affine1(x)
        x = self.dropout(x)
        x = F.relu(x)
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


class ActorCriticPolicy(nn.Module):
    def __init__(self):
        super(ActorCriticPolicy, self).__init__()
        self.affine1 = nn.Linear(4, 16)
        self.action_head = nn.Linear(16, 2)
        self.value_head = nn.Linear(16, 1)
        self.saved_actions = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.affine1(x))
        action_prob = F.softmax(self.action_head(x), dim=-1)
        state_values = self.value_head(x)
        return action_prob, state_values


def run_reinforce(episodes=6, seed=543):
    env = CartLine()
    env.reset(seed=seed)
    torch.manual_seed(seed)
    policy = ReinforcePolicy()
    optimizer = optim.Adam(policy.parameters(), lr=1e-2)

    def select_action(state):
        state = torch.from_numpy(state).float().unsqueeze(0)
        probs = policy(state)
        m = Categorical(probs)
        action = m.sample()
        policy.saved_log_probs.append(m.log_prob(action))
        return action.item()

    def finish_episode():
        R = 0
        policy_loss = []
        returns = deque()
        for r in policy.rewards[::-1]:
            R = r + GAMMA * R
            returns.appendleft(R)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + eps)
        for log_prob, R in zip(policy.saved_log_probs, returns):
            policy_loss.append(-log_prob * R)
        optimizer.zero_grad()
        policy_loss = torch.cat(policy_loss).sum()
        policy_loss.backward()
        optimizer.step()
        del policy.rewards[:]
        del policy.saved_log_probs[:]
        return policy_loss.item()

    out = []
    for i_episode in range(episodes):
        state, _ = env.reset()
        ep_reward = 0
        for t in range(1, 10000):
            action = select_action(state)
            state, reward, terminated, truncated, _ = env.step(action)
            policy.rewards.append(reward)
            ep_reward += reward
            if terminated or truncated:
                break
        out += [ep_reward, finish_episode()]
    return out


def run_actor_critic(episodes=6, seed=543):
    env = CartLine()
    env.reset(seed=seed)
    torch.manual_seed(seed)
    model = ActorCriticPolicy()
    optimizer = optim.Adam(model.parameters(), lr=3e-2)

    def select_action(state):
        state = torch.from_numpy(state).float()
        probs, state_value = model(state)
        m = Categorical(probs)
        action = m.sample()
        model.saved_actions.append(SavedAction(m.log_prob(action), state_value))
        return action.item()

    def finish_episode():
        R = 0
        saved_actions = model.saved_actions
        policy_losses = []
        value_losses = []
        returns = []
        for r in model.rewards[::-1]:
            R = r + GAMMA * R
            returns.insert(0, R)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + eps)
        for (log_prob, value), R in zip(saved_actions, returns):
            advantage = R - value.item()
            policy_losses.append(-log_prob * advantage)
            value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
        optimizer.zero_grad()
        loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
        loss.backward()
        optimizer.step()
        del model.rewards[:]
        del model.saved_actions[:]
        return loss.item()

    out = []
    for i_episode in range(episodes):
        state, _ = env.reset()
        ep_reward = 0
        for t in range(1, 10000):
            action = select_action(state)
            state, reward, terminated, truncated, _ = env.step(action)
            model.rewards.append(reward)
            ep_reward += reward
            if terminated or truncated:
                break
        out += [ep_reward, finish_episode()]
    return out


def run():
    return run_reinforce() + run_actor_critic()

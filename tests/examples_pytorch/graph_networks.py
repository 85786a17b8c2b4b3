"""Graph convolutional and graph attention networks, from
https://github.com/pytorch/examples/tree/main/gcn and .../gat (main.py's GraphConv, GCN,
GraphAttentionLayer, GAT, train_iter and test; load_cora's feature scaling). BSD
3-Clause License, Copyright (c) 2017, Pytorch contributors: see
LICENSE-pytorch-examples. Changes: a random 30-node graph instead of the Cora download
(load_cora's sparse COO steps kept: sparse_coo_tensor, to_sparse, sparse @ dense,
torch.spmm); 5 epochs; the losses are collected instead of printed."""
import numpy as np

import dispatchtorch as torch
import dispatchtorch.nn.functional as F
from dispatchtorch import nn
from dispatchtorch.optim import Adam

LOSSES = []


class GraphConv(nn.Module):
    def __init__(self, input_dim, output_dim, use_bias=False):
        super(GraphConv, self).__init__()

        self.kernel = nn.Parameter(torch.Tensor(input_dim, output_dim))
        nn.init.xavier_normal_(self.kernel) # Initialize the weights using Xavier initialization

        self.bias = None
        if use_bias:
            self.bias = nn.Parameter(torch.Tensor(output_dim))
            nn.init.zeros_(self.bias) # Initialize the bias to zeros

    def forward(self, input_tensor, adj_mat):
        support = torch.mm(input_tensor, self.kernel) # Matrix multiplication between input and weight matrix
        output = torch.spmm(adj_mat, support) # Sparse matrix multiplication between adjacency matrix and support
        if self.bias is not None:
            output = output + self.bias

        return output


class GCN(nn.Module):
    def __init__(self, input_dim, hidden_dim, output_dim, use_bias=True, dropout_p=0.1):
        super(GCN, self).__init__()

        self.gc1 = GraphConv(input_dim, hidden_dim, use_bias=use_bias)
        self.gc2 = GraphConv(hidden_dim, output_dim, use_bias=use_bias)

        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input_tensor, adj_mat):
        x = self.gc1(input_tensor, adj_mat)
        x = F.relu(x) # Apply ReLU activation function
        x = self.dropout(x) # Apply dropout regularization

        x = self.gc2(x, adj_mat)

        return F.log_softmax(x, dim=1)


class GraphAttentionLayer(nn.Module):
    def __init__(self, in_features: int, out_features: int, n_heads: int, concat: bool = False, dropout: float = 0.4, leaky_relu_slope: float = 0.2):
        super(GraphAttentionLayer, self).__init__()

        self.n_heads = n_heads # Number of attention heads
        self.concat = concat # wether to concatenate the final attention heads
        self.dropout = dropout # Dropout rate

        if concat: # concatenating the attention heads
            self.out_features = out_features # Number of output features per node
            assert out_features % n_heads == 0 # Ensure that out_features is a multiple of n_heads
            self.n_hidden = out_features // n_heads
        else: # averaging output over the attention heads (Used in the main paper)
            self.n_hidden = out_features

        self.W = nn.Parameter(torch.empty(size=(in_features, self.n_hidden * n_heads)))
        self.a = nn.Parameter(torch.empty(size=(n_heads, 2 * self.n_hidden, 1)))

        self.leakyrelu = nn.LeakyReLU(leaky_relu_slope) # LeakyReLU activation function
        self.softmax = nn.Softmax(dim=1) # softmax activation function to the attention coefficients

        self.reset_parameters() # Reset the parameters

    def reset_parameters(self):
        nn.init.xavier_normal_(self.W)
        nn.init.xavier_normal_(self.a)

    def _get_attention_scores(self, h_transformed: torch.Tensor):
        source_scores = torch.matmul(h_transformed, self.a[:, :self.n_hidden, :])
        target_scores = torch.matmul(h_transformed, self.a[:, self.n_hidden:, :])

        e = source_scores + target_scores.mT
        return self.leakyrelu(e)

    def forward(self,  h: torch.Tensor, adj_mat: torch.Tensor):
        n_nodes = h.shape[0]

        h_transformed = torch.mm(h, self.W)
        h_transformed = F.dropout(h_transformed, self.dropout, training=self.training)

        h_transformed = h_transformed.view(n_nodes, self.n_heads, self.n_hidden).permute(1, 0, 2)

        e = self._get_attention_scores(h_transformed)

        connectivity_mask = -9e16 * torch.ones_like(e)
        e = torch.where(adj_mat > 0, e, connectivity_mask) # masked attention scores

        attention = F.softmax(e, dim=-1)
        attention = F.dropout(attention, self.dropout, training=self.training)

        h_prime = torch.matmul(attention, h_transformed)

        if self.concat:
            h_prime = h_prime.permute(1, 0, 2).contiguous().view(n_nodes, self.out_features)
        else:
            h_prime = h_prime.mean(dim=0)

        return h_prime


class GAT(nn.Module):
    def __init__(self, in_features, n_hidden, n_heads, num_classes, concat=False, dropout=0.4, leaky_relu_slope=0.2):
        super(GAT, self).__init__()

        self.gat1 = GraphAttentionLayer(
            in_features=in_features, out_features=n_hidden, n_heads=n_heads,
            concat=concat, dropout=dropout, leaky_relu_slope=leaky_relu_slope
            )

        self.gat2 = GraphAttentionLayer(
            in_features=n_hidden, out_features=num_classes, n_heads=1,
            concat=False, dropout=dropout, leaky_relu_slope=leaky_relu_slope
            )

    def forward(self, input_tensor: torch.Tensor , adj_mat: torch.Tensor):
        x = self.gat1(input_tensor, adj_mat)
        x = F.elu(x) # Apply ELU activation function to the output of the first layer

        x = self.gat2(x, adj_mat)

        return F.log_softmax(x, dim=1) # Apply log softmax activation function


def load_graph(gcn, V=30, n_features=12, n_classes=3, seed=0):
    """load_cora's steps on a random graph, as upstream writes them: features scaled by a
    sparse diagonal of their reciprocal row sums, a sparse COO adjacency (repeated edges
    summed) plus self loops; for GCN the D^-1/2 A D^-1/2 renormalisation and sparse
    features and adjacency, for GAT dense ones."""
    rng = np.random.default_rng(seed)
    features = torch.FloatTensor((rng.random((V, n_features)) < 0.3).astype(np.int32)) # Extract feature values
    scale_vector = torch.sum(features, dim=1) # Compute sum of features for each node
    scale_vector = 1 / scale_vector # Compute reciprocal of the sums
    scale_vector[scale_vector == float('inf')] = 0 # Handle division by zero cases
    scale_vector = torch.diag(scale_vector).to_sparse() # Convert the scale vector to a sparse diagonal matrix
    features = scale_vector @ features # Scale the features using the scale vector
    labels = torch.LongTensor(rng.integers(0, n_classes, V))
    edges = rng.integers(0, V, (2, 2 * V)).T.astype(np.int32)
    E = edges.shape[0] # Number of edges
    adj_mat = torch.sparse_coo_tensor(edges.T, torch.ones(E), (V, V), dtype=torch.int64) # Create the initial adjacency matrix as a sparse tensor
    adj_mat = torch.eye(V) + adj_mat # Add self-loops to the adjacency matrix
    if not gcn:
        return features, labels, adj_mat
    degree_mat = torch.sum(adj_mat, dim=1) # Compute the sum of each row in the adjacency matrix (degree matrix)
    degree_mat = torch.sqrt(1 / degree_mat) # Compute the reciprocal square root of the degrees
    degree_mat[degree_mat == float('inf')] = 0 # Handle division by zero cases
    degree_mat = torch.diag(degree_mat).to_sparse() # Convert the degree matrix to a sparse diagonal matrix
    adj_mat = degree_mat @ adj_mat @ degree_mat # Apply the renormalization trick
    return features.to_sparse().to('cpu'), labels, adj_mat.to_sparse().to('cpu')


def train_iter(epoch, model, optimizer, criterion, input, target, mask_train, mask_val, print_every=10):
    model.train()
    optimizer.zero_grad()

    output = model(*input)
    loss = criterion(output[mask_train], target[mask_train]) # Compute the loss using the training mask

    loss.backward()
    optimizer.step()

    loss_train, acc_train = test(model, criterion, input, target, mask_train)
    loss_val, acc_val = test(model, criterion, input, target, mask_val)
    LOSSES.extend([loss.item(), loss_train, acc_train, loss_val, acc_val])


def test(model, criterion, input, target, mask):
    model.eval()
    with torch.no_grad():
        output = model(*input)
        output, target = output[mask], target[mask]

        loss = criterion(output, target)
        acc = (output.argmax(dim=1) == target).float().sum() / len(target)
    return loss.item(), acc.item()


def _run(build, seed, lr, epochs, gcn):
    del LOSSES[:]
    torch.manual_seed(seed)
    features, labels, adj_mat = load_graph(gcn)
    idx = torch.randperm(len(labels))
    idx_test, idx_val, idx_train = idx[:8], idx[8:14], idx[14:]
    net = build(features.shape[1], labels.max().item() + 1)
    optimizer = Adam(net.parameters(), lr=lr, weight_decay=5e-4)
    criterion = nn.NLLLoss()
    for epoch in range(epochs):
        train_iter(epoch + 1, net, optimizer, criterion, (features, adj_mat), labels, idx_train, idx_val)
    return LOSSES + list(test(net, criterion, (features, adj_mat), labels, idx_test))


def run_gcn(epochs=5):
    return _run(lambda n_in, n_out: GCN(n_in, 16, n_out, True, 0.5), 42, 0.01, epochs, True)


def run_gat(epochs=5):
    return _run(lambda n_in, n_out: GAT(in_features=n_in, n_hidden=8, n_heads=2,
                                        num_classes=n_out, concat=False, dropout=0.6,
                                        leaky_relu_slope=0.2), 13, 0.005, epochs, False)
